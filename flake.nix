{
  description = "tether: a Rust implementation of TVM-FFI's object core and C ABI, with a Python extension";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachSystem [
      "x86_64-linux"
      "aarch64-linux"
      "aarch64-darwin"
      "x86_64-darwin"
    ] (system:
      let
        pkgs = import nixpkgs { inherit system; };
        lib = pkgs.lib;
        python = pkgs.python311;
        version = "0.1.0";

        # Sources without build output or local environments.
        src = lib.cleanSourceWith {
          src = ./.;
          filter = path: type:
            let base = baseNameOf path; in
            !(builtins.elem base [ "target" ".venv" "node_modules" "result" ]
              || lib.hasPrefix "bazel-" base);
        };

        # The core: libtether_core (the C ABI) with its header, and the rlib;
        # beside it the testing library, libtether_testing (the testing.*
        # globals and test types, registered into the core when loaded).
        tether-core = pkgs.rustPlatform.buildRustPackage {
          pname = "tether-core";
          inherit version src;
          cargoLock.lockFile = ./Cargo.lock;
          cargoBuildFlags = [ "-p" "tether-core" "-p" "tether-testing" "--lib" ];
          cargoTestFlags = [ "--workspace" "--exclude" "tether-cxx-bridge" ];
          installPhase = ''
            runHook preInstall
            mkdir -p $out/lib $out/include
            for lib in tether_core tether_testing; do
              cp target/*/release/lib$lib${pkgs.stdenv.hostPlatform.extensions.sharedLibrary} $out/lib/ \
                || cp target/release/lib$lib${pkgs.stdenv.hostPlatform.extensions.sharedLibrary} $out/lib/
            done
            cp -r cpp/include/tether $out/include/
            runHook postInstall
          '';
          meta = {
            description = "tether's object core exporting TVM-FFI's C ABI";
            license = lib.licenses.asl20;
          };
        };

        # The Python wheel (maturin), built from python/ with its own lock file.
        tether-python = python.pkgs.buildPythonPackage {
          pname = "tether";
          inherit version src;
          pyproject = true;
          sourceRoot = "source/python";
          cargoDeps = pkgs.rustPlatform.importCargoLock { lockFile = ./python/Cargo.lock; };
          nativeBuildInputs = [
            pkgs.rustPlatform.cargoSetupHook
            pkgs.rustPlatform.maturinBuildHook
            pkgs.cargo
            pkgs.rustc
          ];
          # build.rs builds the core and the testing library from ../rust;
          # point it at those built above instead, so the wheel carries them.
          env.TETHER_CORE_LIB_DIR = "${tether-core}/lib";
          pythonImportsCheck = [ "tether" ];
          meta = {
            description = "One Python wrapper per native object: tether's Python extension";
            license = lib.licenses.asl20;
          };
        };

        # Linking the testing library, whose symbols a test does not name
        # (it registers at load): ELF linkers must be told to keep it.
        testingLink = if pkgs.stdenv.isDarwin then "-ltether_testing"
          else "-Wl,--no-as-needed -ltether_testing -Wl,--as-needed";

        testPython = python.withPackages (ps: [ ps.pytest ps.numpy tether-python ]);
      in
      {
        packages = {
          inherit tether-core tether-python;
          default = tether-core;
        };

        # `nix develop`: everything `make test` and the Bazel front door use.
        devShells.default = pkgs.mkShell {
          packages = [
            pkgs.cargo
            pkgs.rustc
            pkgs.clippy
            pkgs.rustfmt
            (python.withPackages (ps: [ ps.pip ps.pytest ps.numpy ]))
            pkgs.maturin
            pkgs.stdenv.cc
            pkgs.gnumake
            # `bazel` runs the version in .bazelversion through bazelisk.
            (pkgs.writeShellScriptBin "bazel" ''exec ${pkgs.bazelisk}/bin/bazelisk "$@"'')
            pkgs.buildifier
            pkgs.nodejs
          ];
          shellHook = ''
            echo "tether dev shell: make test | bazel test //... (via bazelisk) | make lint"
          '';
        };

        checks = {
          # The Rust suites (cargo test over the workspace, in the build).
          rust = tether-core.overrideAttrs (_: { doCheck = true; });

          # The C ABI test against the packaged libraries and header (it
          # calls testing.* globals: the testing library is linked too).
          c-abi = pkgs.runCommandCC "tether-c-abi-test" { } ''
            cc -std=c11 -Wall -Wextra -Werror -I${tether-core}/include ${./tests/c/abi_test.c} \
              -L${tether-core}/lib ${testingLink} -ltether_core \
              -Wl,-rpath,${tether-core}/lib -o abi_test
            ./abi_test
            touch $out
          '';

          # The Python suites against the built wheel.
          python = pkgs.runCommandCC "tether-python-tests" { nativeBuildInputs = [ testPython pkgs.cargo ]; } ''
            cp -r ${./tests} tests
            chmod -R u+w tests
            cd tests/python
            HOME=$TMPDIR python -m pytest -q -p no:cacheprovider
            touch $out
          '';
        };

        formatter = pkgs.nixpkgs-fmt;
      });
}
