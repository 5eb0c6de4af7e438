{
  description = "tether: a Rust implementation of TVM-FFI's object core and C ABI, with a Python extension";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    # The systems CI runs `nix flake check` on (ubuntu-24.04,
    # ubuntu-24.04-arm, macos-14), each with a wheel of the peer below.
    flake-utils.lib.eachSystem [
      "x86_64-linux"
      "aarch64-linux"
      "aarch64-darwin"
    ] (system:
      let
        pkgs = import nixpkgs { inherit system; };
        lib = pkgs.lib;
        # CPython 3.12: nixpkgs' Hydra builds the package sets of 3.12 and 3.13
        # (all-packages.nix recurses into those two), so the dev shell's and
        # the checks' Python packages come from the binary cache instead of
        # being compiled (3.11's set is not built there).
        python = pkgs.python312;
        version = "0.1.0";

        # The whole repository without version control, build output or local
        # environments. Every build and check takes this one source set, so a
        # file refers to its neighbours as in a checkout (tests/c/abi_test.c
        # includes check.h, tests/python reads ../../README.md and builds
        # ../rust_plugin against ../../rust/sys); tools/nix_check/copied_sets.py
        # fails `make lint-nix` when a check's files refer outside what it copies.
        src = lib.cleanSourceWith {
          src = ./.;
          filter = path: type:
            let base = baseNameOf path; in
            lib.cleanSourceFilter path type
            && !(builtins.elem base [ "target" ".venv" "node_modules" "result" "__pycache__" ]
              || lib.hasPrefix "bazel-" base);
        };

        # The peer apache-tvm-ffi 0.1.15.post2 (not in nixpkgs), from PyPI's
        # CPython 3.12 wheels, sha256-pinned. A test dependency only: its
        # headers compile the upstream-style kernels and its library shares a
        # process with tether in the coexistence tests; without it about 30
        # Python tests would skip.
        tvmFfiVersion = "0.1.15.post2";
        tvmFfiWheels = {
          x86_64-linux = {
            url = "https://files.pythonhosted.org/packages/1c/26/5f33831621f3bb493556ad508ee419ba26e134356ecfdb2ca5415f9bbe5c/apache_tvm_ffi-0.1.15.post2-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
            sha256 = "059eed9bfc94bcd41650fb8eefde74040a1bc7e7b1a6f0a8ff897b02b118875b";
          };
          aarch64-linux = {
            url = "https://files.pythonhosted.org/packages/60/e3/bd80e7c07573ea1423df4c7f527198bac7801bd8e0f962fc1c9530c95690/apache_tvm_ffi-0.1.15.post2-cp312-cp312-manylinux_2_24_aarch64.manylinux_2_28_aarch64.whl";
            sha256 = "5c807217f134272d6e08ffdeeb9f1b2c1f366e096712b4e47b88ee9103f80113";
          };
          aarch64-darwin = {
            url = "https://files.pythonhosted.org/packages/b2/d1/20a3a9e29f10bb5a2aa8c75a5836063db8895593c8aee22b14461fa37bf4/apache_tvm_ffi-0.1.15.post2-cp312-cp312-macosx_11_0_arm64.whl";
            sha256 = "258264d149d276ae96edb3aad31d4896248b1a466715c64cf345d7b724e0dd8b";
          };
        };
        apache-tvm-ffi = python.pkgs.buildPythonPackage {
          pname = "apache-tvm-ffi";
          version = tvmFfiVersion;
          format = "wheel";
          src = pkgs.fetchurl tvmFfiWheels.${system};
          # The manylinux wheel's libtvm_ffi links libstdc++.
          nativeBuildInputs = lib.optionals pkgs.stdenv.isLinux [ pkgs.autoPatchelfHook ];
          buildInputs = lib.optionals pkgs.stdenv.isLinux [ pkgs.stdenv.cc.cc.lib ];
          propagatedBuildInputs = [ python.pkgs.typing-extensions ];
          pythonImportsCheck = [ "tvm_ffi" ];
          meta = {
            description = "apache-tvm-ffi, the peer tether's tests compare against (test dependency)";
            license = lib.licenses.asl20;
          };
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
          # The wheel carries upstream's C++ headers, taken from its pinned
          # sdist (build.rs checks the sha256 again); fetched here, as the
          # sandbox has no network.
          env.TETHER_TVM_FFI_SDIST = pkgs.fetchurl {
            url = "https://files.pythonhosted.org/packages/a8/8f/2fcd88ce2f43dd2c1945c6613356a9bc1f5fdbe6e37080d34d2b980ad9f6/apache_tvm_ffi-0.1.15.post2.tar.gz";
            sha256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b";
          };
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

        # Everything the Python suites import: tests needing a missing one
        # would skip rather than fail (tools/nix_check/copied_sets.py checks
        # this list against the suites' importorskip calls).
        testPython = python.withPackages (ps: [
          ps.pytest
          ps.numpy
          ps.mypy
          ps.nanobind
          apache-tvm-ffi
          tether-python
        ]);
      in
      {
        packages = {
          inherit tether-core tether-python apache-tvm-ffi;
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
          # It is compiled inside the source set: it includes check.h beside it.
          c-abi = pkgs.runCommandCC "tether-c-abi-test" { } ''
            cc -std=c11 -Wall -Wextra -Werror -I${tether-core}/include ${src}/tests/c/abi_test.c \
              -L${tether-core}/lib ${testingLink} -ltether_core \
              -Wl,-rpath,${tether-core}/lib -o abi_test
            ./abi_test
            touch $out
          '';

          # The Python suites against the built wheel, run inside a writable
          # copy of the whole source set (the suites read the README, build
          # tests/rust_plugin against rust/sys with cargo, cache nanobind's
          # objects under target/). cargo needs no download: the plugin's
          # only dependency is the path crate tether-sys.
          python = pkgs.runCommandCC "tether-python-tests" {
            nativeBuildInputs = [ testPython pkgs.cargo pkgs.rustc pkgs.ninja ];
          } ''
            cp -r ${src} source
            chmod -R u+w source
            cd source/tests/python
            HOME=$TMPDIR python -m pytest -q -p no:cacheprovider
            touch $out
          '';
        };

        formatter = pkgs.nixpkgs-fmt;
      });
}
