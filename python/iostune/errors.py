"""The exceptions of the iostune package: one per kind of failure the C API reports.

Every failure of the library arrives with its one-line message, the same text the `iostune`
command prints after "iostune: error:"; the class says what kind it is, so a caller can act on
it (search when a schedule is missing, fall back to PyTorch without a GPU).
"""


class Error(Exception):
    """A failure of iostune: a file, the schedule database, CUDA or memory (the base of all)."""

    status = "IOSTUNE_ERROR"


class BadInputError(Error, ValueError):
    """A model, option, argument or tensor the caller gave: unknown, malformed or wrong."""

    status = "IOSTUNE_ERROR_BAD_INPUT"


class MissingScheduleError(Error, LookupError):
    """No stored schedule may run for this model, batch size, precision and GPU."""

    status = "IOSTUNE_ERROR_MISSING_SCHEDULE"


class NoGPUError(Error, RuntimeError):
    """This needs an NVIDIA GPU and the machine has none usable."""

    status = "IOSTUNE_ERROR_NO_GPU"


class InternalError(Error, RuntimeError):
    """A bug in iostune."""

    status = "IOSTUNE_ERROR_INTERNAL"


# iostune_status values (include/iostune/iostune.h) to the class raised for them.
BY_STATUS = {
    1: Error,
    2: BadInputError,
    3: MissingScheduleError,
    4: NoGPUError,
    5: InternalError,
}
