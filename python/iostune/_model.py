"""iostune.Model: a model loaded by the library (zoo name, .json or .onnx file) at a batch size."""
import ctypes
import os

from . import _lib
from .errors import BadInputError


class Model:
    """A model as the library reads it: `spec` is a zoo name (`iostune models`), an iostune model
    file (.json) or an ONNX file (.onnx, imported with its weights), at `batch`. Bad input (an
    unknown name, a malformed file, an operator the importer refuses) raises BadInputError."""

    def __init__(self, spec, batch=1):
        if isinstance(spec, Model):
            raise BadInputError("Model(spec): spec is already a Model")
        if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
            raise BadInputError("batch size must be a positive integer, got %r" % (batch,))
        lib = _lib.lib()
        self.spec = os.fspath(spec) if isinstance(spec, os.PathLike) else str(spec)
        handle = ctypes.c_void_p()
        _lib.check(lib.iostune_model_load(_lib.text(self.spec), batch, ctypes.byref(handle)))
        self._handle = handle
        self.name = lib.iostune_model_name(handle).decode()
        self.fingerprint = lib.iostune_model_fingerprint(handle).decode()
        self.batch = batch
        self.input_shapes = [self._shape(lib.iostune_model_input_shape, k)
                             for k in range(lib.iostune_model_input_count(handle))]
        self.output_shapes = [self._shape(lib.iostune_model_output_shape, k)
                              for k in range(lib.iostune_model_output_count(handle))]

    def _shape(self, getter, index):
        dims = (ctypes.c_int * 4)()
        _lib.check(getter(self._handle, index, dims))
        return tuple(dims)

    @property
    def handle(self):
        if self._handle is None:
            raise BadInputError("model '%s' was closed" % self.name)
        return self._handle

    def close(self):
        if getattr(self, "_handle", None) is not None:
            _lib.lib().iostune_model_free(self._handle)
            self._handle = None

    def __del__(self):
        # At interpreter exit the modules may be gone already; the process frees everything.
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "iostune.Model(%r, batch=%d, fingerprint=%s)" % (self.spec, self.batch,
                                                                self.fingerprint)


def as_model(model, batch):
    """`model` itself when it is a Model, else the Model of that spec at `batch`."""
    return model if isinstance(model, Model) else Model(model, batch)
