# Evaluates flake.nix's outputs against stub inputs (stub_nixpkgs.nix and a
# flake-utils with the real eachSystem semantics) and checks what a user's
# `nix develop`, `nix build` and `nix flake check` rely on: the systems, the
# packages and how they are built, the dev shell's tools, the checks.
# Run: nix-instantiate --eval --strict --readonly-mode tools/nix_check/eval.nix
# What a check copies and whether its files' references stay inside it is
# checked by copied_sets.py (over sources.nix), also run by `make lint-nix`.
let
  out = import ./flake_outputs.nix;

  # The systems CI runs the flake's checks on (.github/workflows/ci.yml).
  systems = [ "x86_64-linux" "aarch64-linux" "aarch64-darwin" ];
  check = cond: msg: if cond then true else throw "flake check: ${msg}";
  names = drvs: map (d: d.name) drvs;
  has = attrs: n: builtins.hasAttr n attrs;

  perSystem = system:
    let
      p = out.packages.${system};
      shell = out.devShells.${system}.default;
      shellTools = names shell.args.packages;
      pyEnv = builtins.head (builtins.filter (d: d.name == "python3-env") shell.args.packages);
      core = p.tether-core.args;
      wheel = p.tether-python.args;
      testEnv = builtins.head (builtins.filter (d: d.name == "python3-env") c.python.args.nativeBuildInputs);
      cpTag = builtins.replaceStrings [ "." ] [ "" ] pyEnv.args.pythonVersion;
      c = out.checks.${system};
    in
    builtins.all (x: x) [
      (check (builtins.all (has p) [ "tether-core" "tether-python" "default" ]) "${system}: packages")
      (check (core.cargoLock.lockFile == ../../Cargo.lock) "${system}: tether-core uses the root Cargo.lock")
      (check (builtins.pathExists core.cargoLock.lockFile) "${system}: Cargo.lock exists")
      (check (!(core.src.filter "/x/target" "directory")) "${system}: the source filter drops target/")
      (check (core.src.filter "/x/rust" "directory") "${system}: the source filter keeps rust/")
      (check (p.tether-python.builder == "buildPythonPackage" && wheel.pyproject) "${system}: the wheel is a pyproject build")
      (check (builtins.elem "maturinBuildHook" (names wheel.nativeBuildInputs)) "${system}: the wheel is built by maturin")
      (check (wheel.cargoDeps.args.lockFile == ../../python/Cargo.lock) "${system}: the wheel vendors python/Cargo.lock")
      (check (builtins.all (t: builtins.elem t shellTools) [ "cargo" "rustc" "maturin" "cc" "bazel" "python3-env" ]) "${system}: dev shell tools (${toString shellTools})")
      (check (builtins.all (t: builtins.elem t (names pyEnv.args.packages)) [ "pytest" "numpy" ]) "${system}: dev shell Python has pytest and numpy")
      (check (builtins.all (has c) [ "rust" "c-abi" "python" ]) "${system}: checks")
      (check c.rust.args.doCheck "${system}: the rust check runs the tests")
      (check (builtins.match ".*abi_test.*" c.c-abi.args.script != null) "${system}: the C check runs abi_test")
      (check (builtins.match ".*-ltether_testing.*" c.c-abi.args.script != null) "${system}: the C check links the testing library")
      (check (builtins.elem "tether-testing" core.cargoBuildFlags) "${system}: tether-core's build makes the testing library too")
      (check (builtins.match ".*pytest.*" c.python.args.script != null) "${system}: the Python check runs pytest")
      (check (p.apache-tvm-ffi.args.format == "wheel" && builtins.match "[0-9a-f]{64}" p.apache-tvm-ffi.args.src.args.sha256 != null)
        "${system}: apache-tvm-ffi is the pinned wheel, sha256-checked")
      (check (builtins.match ".*-cp${cpTag}-cp${cpTag}-.*" p.apache-tvm-ffi.args.src.args.url != null) "${system}: the apache-tvm-ffi wheel is for CPython ${pyEnv.args.pythonVersion}, the flake's Python")
      (check (pyEnv.args.hydraBuilt && testEnv.args.hydraBuilt) "${system}: the dev shell's and the checks' Python (${pyEnv.args.pythonVersion}) is a package set nixpkgs' Hydra builds")
      (check (testEnv.args.pythonVersion == pyEnv.args.pythonVersion && wheel.pythonVersion == pyEnv.args.pythonVersion) "${system}: one CPython for the dev shell, the wheel and the checks")
    ];
in
{
  systems = check (builtins.attrNames out.packages == builtins.sort builtins.lessThan systems) "systems";
  perSystem = builtins.all perSystem systems;
  formatter = check (builtins.all (s: has out.formatter s) systems) "formatter";
}
