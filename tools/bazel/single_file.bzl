"""The one file of a target's outputs that has a given suffix.

A `rust_shared_library` has one output on ELF and Mach-O systems but two on
Windows (`name.dll` and its import library `name.dll.lib`), so attributes
that take a single file (`copy_file`'s `src`, `$(rootpath)`) cannot name it
there. `single_file(src = ..., suffix = ".dll", out = ...)` places the one
output ending in `suffix` at `out`.
"""

def _single_file_impl(ctx):
    suffix = ctx.attr.suffix
    matches = [f for f in ctx.attr.src[DefaultInfo].files.to_list() if f.basename.endswith(suffix) and not f.basename.endswith(suffix + ".lib")]
    if len(matches) != 1:
        fail("{}: {} outputs of {} end in {} ({})".format(
            ctx.label,
            len(matches),
            ctx.attr.src.label,
            suffix,
            [f.basename for f in ctx.attr.src[DefaultInfo].files.to_list()],
        ))
    ctx.actions.symlink(output = ctx.outputs.out, target_file = matches[0])
    return [DefaultInfo(files = depset([ctx.outputs.out]), runfiles = ctx.runfiles([ctx.outputs.out]))]

single_file = rule(
    implementation = _single_file_impl,
    doc = "Places the one output of `src` whose name ends in `suffix` at `out`.",
    attrs = {
        "out": attr.output(mandatory = True, doc = "Where the file goes (package-relative)."),
        "src": attr.label(mandatory = True, doc = "The target whose outputs hold the file."),
        "suffix": attr.string(mandatory = True, doc = "How the file's name ends, e.g. `.dll`."),
    },
)
