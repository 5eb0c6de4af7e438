# flake.nix's outputs evaluated against stub inputs: stub_nixpkgs.nix and a
# flake-utils with the real eachSystem semantics. Shared by eval.nix (what
# the outputs are) and sources.nix (what the checks copy and run).
let
  flake = import ../../flake.nix;
  flake-utils.lib.eachSystem = systems: f:
    let
      perSystem = builtins.listToAttrs (map (s: { name = s; value = f s; }) systems);
      names = builtins.attrNames (f (builtins.head systems));
    in
    builtins.listToAttrs (map
      (n: { name = n; value = builtins.mapAttrs (_: v: v.${n}) perSystem; })
      names);
  nixpkgs = { outPath = ./stub_nixpkgs.nix; };
in
flake.outputs { self = { }; inherit nixpkgs flake-utils; }
