# A stand-in for nixpkgs, for evaluating flake.nix where nixpkgs cannot be
# downloaded: every builder returns an attribute set recording its name and
# arguments (with an outPath, so it interpolates into strings like a
# derivation), and the few library functions the flake calls behave as in
# nixpkgs.
{ system }:
let
  drv = builder: name: args: {
    type = "derivation";
    inherit builder name args system;
    outPath = "/nix/store/00000000000000000000000000000000-${name}";
    overrideAttrs = f: drv builder name (args // f args);
  };
  pkg = name: drv "package" name { };
  pythonPackages = {
    pytest = pkg "pytest";
    numpy = pkg "numpy";
    pip = pkg "pip";
    buildPythonPackage = args: drv "buildPythonPackage" args.pname args;
  };
in
{
  inherit system;
  lib = {
    cleanSourceWith = { src, filter }: { inherit src filter; outPath = src; };
    hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;
    licenses.asl20 = { spdxId = "Apache-2.0"; };
  };
  stdenv = {
    cc = pkg "cc";
    hostPlatform.extensions.sharedLibrary = if builtins.match ".*darwin" system != null then ".dylib" else ".so";
    isDarwin = builtins.match ".*darwin" system != null;
  };
  rustPlatform = {
    buildRustPackage = args: drv "buildRustPackage" args.pname args;
    importCargoLock = args: drv "importCargoLock" "cargo-vendor" args;
    cargoSetupHook = pkg "cargoSetupHook";
    maturinBuildHook = pkg "maturinBuildHook";
  };
  python311 = {
    pkgs = pythonPackages;
    withPackages = f: drv "python.withPackages" "python3-env" { packages = f pythonPackages; };
  };
  mkShell = args: drv "mkShell" "shell" args;
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
