"""Errors the engine raises for input a user can fix; operators turn them into reports."""


class InputError(ValueError):
    """Bad input or parameters. ``str(err)`` is a message a user understands (no jargon, names the
    offending object, bone or value)."""


class MissingRoles(InputError):
    """The rig lacks bones for some roles; ``roles`` lists them."""

    def __init__(self, roles, rig_name: str = ""):
        self.roles = list(roles)
        where = f" on '{rig_name}'" if rig_name else ""
        super().__init__(
            f"Missing bone roles{where}: {', '.join(self.roles)}. "
            "Assign them in the ProcAnim > Character panel or rename the bones."
        )
