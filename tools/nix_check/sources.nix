# What each of the flake's checks copies into the store and runs, as JSON for
# copied_sets.py: per system, each check's script, its inputs (with the
# Python packages of a python.withPackages environment) and the source sets
# it reaches, each with the repository-relative files its filter keeps.
# Run: nix-instantiate --eval --strict --json --readonly-mode tools/nix_check/sources.nix
let
  out = import ./flake_outputs.nix;

  # Source sets reachable from a derivation's arguments (its src, the
  # packages among its inputs, theirs...).
  collect = depth: v:
    if depth == 0 then [ ]
    else if builtins.isAttrs v then
      (if v ? sourceSetRoot then [ v ]
      else if v ? args then collect (depth - 1) v.args
      else builtins.concatLists (map (n: collect (depth - 1) v.${n}) (builtins.attrNames v)))
    else if builtins.isList v then builtins.concatLists (map (collect (depth - 1)) v)
    else [ ];

  # The files a source set copies: its root walked with its filter, as
  # nixpkgs' cleanSourceWith does.
  files = set:
    let
      go = dir: rel: builtins.concatLists (builtins.attrValues (builtins.mapAttrs
        (name: type:
          let
            path = dir + "/${name}";
            r = if rel == "" then name else "${rel}/${name}";
          in
          if !(set.filter (toString path) type) then [ ]
          else if type == "directory" then go path r
          else [ r ])
        (builtins.readDir dir)));
    in
    go set.sourceSetRoot "";

  describeInput = d: {
    name = d.name or "";
    packages = map (p: p.name or "") ((d.args or { }).packages or [ ]);
  };

  perSystem = system:
    let
      checks = out.checks.${system};
      sets = builtins.concatLists (map (n: collect 6 checks.${n}) (builtins.attrNames checks));
      unique = builtins.attrValues (builtins.listToAttrs (map (s: { name = s.outPath; value = s; }) sets));
    in
    {
      checks = builtins.mapAttrs
        (_: c: {
          script = c.args.script or "";
          src = if (c.args.src or null) != null && c.args.src ? sourceSetRoot then c.args.src.outPath else "";
          inputs = map describeInput (c.args.nativeBuildInputs or [ ]);
        })
        checks;
      sources = map (s: { storePath = s.outPath; root = toString s.sourceSetRoot; files = files s; }) unique;
    };
in
builtins.mapAttrs (system: _: perSystem system) out.checks
