"""Rules of the roblox api family: one module per rule id."""
