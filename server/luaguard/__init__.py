"""luaguard: deterministic guard-rails for AI-written Roblox (Luau) code."""

__version__ = "0.1.0"
