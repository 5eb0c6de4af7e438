# A stand-in for nixpkgs, for evaluating flake.nix where nixpkgs cannot be
# downloaded: every builder returns an attribute set recording its name and
# arguments (with an outPath, so it interpolates into strings like a
# derivation), and the few library functions the flake calls behave as in
# nixpkgs. A source set (cleanSourceWith) keeps its root and filter, so
# sources.nix can list the files it copies; its outPath is a fixed fake
# store path (interpolating it copies nothing).
{ system }:
let
  drv = builder: name: args: {
    type = "derivation";
    inherit builder name args system;
    outPath = "/nix/store/00000000000000000000000000000000-${name}";
    overrideAttrs = f: drv builder name (args // f args);
  };
  pkg = name: drv "package" name { };
  # A CPython and its package set; `hydraBuilt`: whether nixpkgs' Hydra
  # builds the set (pkgs/top-level/all-packages.nix: recurseIntoAttrs on
  # python312Packages and python313Packages only), i.e. whether its
  # packages come from the binary cache.
  mkPython = version: hydraBuilt:
    let
      pythonPackages = {
        pytest = pkg "pytest";
        numpy = pkg "numpy";
        pip = pkg "pip";
        mypy = pkg "mypy";
        nanobind = pkg "nanobind";
        typing-extensions = pkg "typing-extensions";
        buildPythonPackage = args: drv "buildPythonPackage" args.pname (args // { pythonVersion = version; });
      };
    in
    {
      inherit hydraBuilt;
      pythonVersion = version;
      pkgs = pythonPackages;
      withPackages = f: drv "python.withPackages" "python3-env" {
        packages = f pythonPackages;
        pythonVersion = version;
        inherit hydraBuilt;
      };
    };
in
{
  inherit system;
  lib = {
    # A source set filtered twice keeps both filters, as in nixpkgs.
    cleanSourceWith = { src, filter ? (_: _: true), name ? "source" }:
      let
        inner = if builtins.isAttrs src && src ? sourceSetRoot then src else null;
        root = if inner != null then inner.sourceSetRoot else src;
        filter' = if inner != null then (p: t: inner.filter p t && filter p t) else filter;
      in
      {
        sourceSetRoot = root;
        filter = filter';
        outPath = "/nix/store/11111111111111111111111111111111-${name}";
      };
    # nixpkgs' lib/sources.nix cleanSourceFilter: no version control
    # folders, editor backups, object files, result links.
    cleanSourceFilter = name: type:
      let base = baseNameOf (toString name); in
      !((type == "directory" && builtins.elem base [ ".git" ".svn" "CVS" ".hg" ])
        || builtins.match "^\\.sw[a-z]$" base != null
        || builtins.match "^\\..*\\.sw[a-z]$" base != null
        || builtins.match "^.*~$" base != null
        || builtins.match "^.*\\.(o|so)$" base != null && type != "directory"
        || (type == "symlink" && builtins.match "^result(|-.*)$" base != null));
    optionals = cond: xs: if cond then xs else [ ];
    hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;
    licenses.asl20 = { spdxId = "Apache-2.0"; };
  };
  stdenv = {
    cc = pkg "cc" // { cc.lib = pkg "libstdc++"; };
    isLinux = builtins.match ".*linux" system != null;
    hostPlatform.extensions.sharedLibrary = if builtins.match ".*darwin" system != null then ".dylib" else ".so";
    isDarwin = builtins.match ".*darwin" system != null;
  };
  rustPlatform = {
    buildRustPackage = args: drv "buildRustPackage" args.pname args;
    importCargoLock = args: drv "importCargoLock" "cargo-vendor" args;
    cargoSetupHook = pkg "cargoSetupHook";
    maturinBuildHook = pkg "maturinBuildHook";
  };
  python311 = mkPython "3.11" false;
  python312 = mkPython "3.12" true;
  python313 = mkPython "3.13" true;
  mkShell = args: drv "mkShell" "shell" args;
  fetchurl = args: drv "fetchurl" (baseNameOf args.url) args;
  autoPatchelfHook = pkg "autoPatchelfHook";
  ninja = pkg "ninja";
  runCommandCC = name: env: script: drv "runCommandCC" name (env // { inherit script; });
  writeShellScriptBin = name: text: drv "writeShellScriptBin" name { inherit text; };
  cargo = pkg "cargo";
  rustc = pkg "rustc";
  clippy = pkg "clippy";
  rustfmt = pkg "rustfmt";
  maturin = pkg "maturin";
  gnumake = pkg "gnumake";
  bazelisk = pkg "bazelisk";
  buildifier = pkg "buildifier";
  nodejs = pkg "nodejs";
  nixpkgs-fmt = pkg "nixpkgs-fmt";
}
