"""Compatibility values for `target_compatible_with`.

`target_compatible_with` takes constraint values only; a config setting such
as //platforms:elf (a group of OS constraints) is not one, so a target
limited to ELF systems selects on it instead.
"""

# Compatible with the ELF systems of //platforms:elf, incompatible elsewhere.
ELF_ONLY = select({
    "//platforms:elf": [],
    "//conditions:default": ["@platforms//:incompatible"],
})
