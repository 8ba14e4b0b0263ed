"""luaguard's semantic model of a project: what every name in Luau code refers to, and
what evidence says about names the project files do not show.

Modules, each importing only those above it (one direction, no cycles):

* :mod:`.verdict` - :class:`~.verdict.Verdict` (in the project; created by a script,
  by Roblox, by a framework; possible in the place; near miss; nothing could create it)
  and the severity each earns;
* :mod:`.places` - where scripts run and the instances that exist only at run time
  (characters, template clone sites, possible children);
* :mod:`.scans` - what every script says, read as text (names, path steps, loaders);
* :mod:`.facts` - what one script does at run time (creations, moves), read from its parse;
* :mod:`.frameworks` - Wally, Nevermore, Luau string requires and ``.luaurc`` aliases;
* :mod:`.resolve` - the :class:`~.resolve.Resolver`: an expression's value, the misses of
  a file's paths;
* :mod:`.world` - the run-time world: what the project's scripts create where;
* :mod:`.snapshot` - :class:`~.snapshot.Snapshot`, one project's model at one time, and
  its public :meth:`~.snapshot.Snapshot.verdict`.

The checks (:mod:`luaguard.checks`), the decoding guard (:mod:`luaguard.guard`) and the
tool-call checks read verdicts from here; nothing here imports them.
"""
