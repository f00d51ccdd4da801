"""An accelerator emulated on the CPU, so CPU-only CI catches a tensor created on the wrong device (issue 29).

Inside :func:`emulated_accelerator` the device ``meta`` stands for the GPU: ``model.to("meta")``,
``torch.arange(n, device=x.device)`` etc. give tensors that report ``device.type == "meta"`` but carry real
CPU data underneath (a wrapper tensor subclass), so models run for real: data-dependent code (``.item()``,
``.tolist()``, ``nonzero``, packed RNN sequences, beam search) works, autograd works, and every operator
checks, as CUDA does, that its tensor arguments are on one device. A tensor made without ``device=`` (on the
CPU) meeting an emulated one raises :class:`DeviceMismatch`, as ``index is on cpu, different from other
tensors on cuda:0`` does on a GPU. ``.numpy()`` of an emulated tensor raises, as it does for a CUDA tensor.

Why not torch's own tools: ``FakeTensorMode`` fakes ``cuda`` tensors on a CPU build but has no data, so
``.item()``, ``nonzero`` and packed sequences fail before the code under test is reached, and a backward pass
through fake ``cuda`` tensors aborts the process on a CPU build (no CUDA device guard); the ``meta`` device has
no data either. Real ``meta`` tensors are never made here: ``device="meta"`` becomes ``cpu`` underneath.

:func:`host_syncs` records, inside the block, every operation that on CUDA makes the host wait for the device
(a value or a size copied to the host: ``.item()`` / ``bool()``, ``nonzero``, boolean-mask indexing, ``unique``,
copies to the CPU, ``.tolist()``) with the code that asked for it, so CPU-only CI can hold a training step to
"no per-step host synchronisation" (issue 29) the way a CUDA profile would.

What CUDA also accepts and so does this: 0-dim CPU tensors as scalars, CPU index tensors in advanced
indexing (``x[idx]``), cross-device ``copy_`` / ``.to()``, and the CPU lengths / batch sizes of packed sequences.
"""

from __future__ import annotations

import contextlib

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

DEVICE = torch.device("meta")  # what emulated tensors report

aten = torch.ops.aten
# Operators that legitimately take CPU tensors alongside accelerator ones (see the module docstring).
_MIXED_OK = {
    aten.copy_.default,
    aten._to_copy.default,
    aten.index.Tensor,
    aten.index_put_.default,
    aten.index_put.default,
    aten._index_put_impl_.default,
    aten._pack_padded_sequence.default,
    aten._pack_padded_sequence_backward.default,
    aten._pad_packed_sequence.default,
    aten.lstm.data,
    aten.gru.data,
}
# Operators whose second output (batch sizes, lengths) is a CPU tensor on CUDA too.
_CPU_SECOND_OUTPUT = {aten._pack_padded_sequence.default, aten._pad_packed_sequence.default}
# In-place operators that change a tensor's shape (the emulated wrapper must follow its data).
_INPLACE_VIEWS = {
    aten.transpose_.default,
    aten.t_.default,
    aten.squeeze_.default,
    aten.squeeze_.dim,
    aten.unsqueeze_.default,
    aten.swapdims_.default,
    aten.as_strided_.default,
}


# Operators that copy a value or a size of a device tensor to the host (on CUDA: a synchronisation).
_SYNCING = {
    aten._local_scalar_dense.default,
    aten.nonzero.default,
    aten.masked_select.default,
    aten._unique2.default,
    aten.unique_dim.default,
    aten.unique_consecutive.default,
    aten.repeat_interleave.Tensor,
}
_INDEXING = {aten.index.Tensor, aten.index_put_.default, aten.index_put.default, aten._index_put_impl_.default}
_SYNC_LOG: list | None = None  # host_syncs() records here
_TO_ACCELERATOR = [0]  # inside _FunctionMode's move to the accelerator (its "cpu" is the emulated device's)


def _record_sync(what: str) -> None:
    """Note a host synchronisation with the first frame outside torch and this module that asked for it."""
    if _SYNC_LOG is None:
        return
    import traceback

    here = __file__.rsplit(".", 1)[0]
    for frame in reversed(traceback.extract_stack()[:-2]):
        name = frame.filename
        if not name.startswith(here) and "/torch/" not in name:
            _SYNC_LOG.append((what, f"{name.split('site-packages/')[-1].split('src/')[-1]}:{frame.lineno}"))
            return
    _SYNC_LOG.append((what, "?"))


def _syncs(func, args, kwargs, out_device: str) -> str | None:
    """What ``func``, which met an emulated tensor, copies from the emulated device to the host, if anything."""
    if func in _SYNCING and not (func is aten.repeat_interleave.Tensor and kwargs.get("output_size") is not None):
        return str(func.overloadpacket.__name__)
    if func in _INDEXING and any(
        isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in (args[1] or ()) if i is not None
    ):
        return f"{func.overloadpacket.__name__} with a boolean mask"
    if func is aten._to_copy.default and out_device == "cpu" and not _TO_ACCELERATOR[0]:
        return "copy to the host"
    if func is aten.copy_.default and not isinstance(args[0], Emulated) and isinstance(args[1], Emulated):
        return "copy to the host"
    return None


@contextlib.contextmanager
def host_syncs():
    """Inside :func:`emulated_accelerator`: yields a list that fills with ``(operation, "file:line")`` per host
    synchronisation the code under test would make on CUDA (the file: the first frame outside torch)."""
    global _SYNC_LOG
    previous, _SYNC_LOG = _SYNC_LOG, []
    try:
        yield _SYNC_LOG
    finally:
        _SYNC_LOG = previous


class DeviceMismatch(RuntimeError):
    """An operator met tensors on the emulated accelerator and on the CPU."""


class Emulated(torch.Tensor):
    """A tensor on the emulated accelerator: reports ``meta``, holds a real CPU tensor (``elem``)."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        r = torch.Tensor._make_wrapper_subclass(
            cls,
            elem.size(),
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
            dtype=elem.dtype,
            layout=elem.layout,
            device=DEVICE,
            requires_grad=elem.requires_grad,
        )
        r.elem = elem
        return r

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Emulated({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"an emulated tensor was used outside emulated_accelerator(): {func}")


def _is_accelerator(device) -> bool:
    return device is not None and torch.device(device).type in ("meta", "cuda")


class _ToEmulated(torch.autograd.Function):
    """CPU tensor -> emulated tensor, keeping the autograd graph (``x.to(device)`` of a non-leaf)."""

    @staticmethod
    def forward(ctx, x):
        return Emulated(x.detach().clone())

    @staticmethod
    def backward(ctx, grad):
        return grad.elem if isinstance(grad, Emulated) else grad


def _target_device(name: str, args, kwargs):
    """The device a ``Tensor.to`` / ``Tensor.cuda`` call moves to (None: none named)."""
    if name == "cuda":
        return DEVICE
    for a in (*args[1:], kwargs.get("device")):
        if isinstance(a, (str, torch.device)):
            return a
    return None


class _FunctionMode(TorchFunctionMode):
    """Python-level half: factory calls and ``.to()`` that name the accelerator (before torch would try to
    initialise a CUDA runtime), and ``.tolist()`` / ``.numpy()`` of emulated tensors."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        first = args[0] if args else None
        if isinstance(first, Emulated) and name == "tolist":
            _record_sync("tolist")
            return first.elem.tolist()
        if isinstance(first, Emulated) and name in ("numpy", "__array__"):
            raise TypeError("can't convert an accelerator tensor to numpy: copy it to the CPU first (.cpu())")
        moving = name in ("to", "cuda") and isinstance(first, torch.Tensor) and not isinstance(first, Emulated)
        if moving and _is_accelerator(_target_device(name, args, kwargs)):
            if name == "cuda":
                return _ToEmulated.apply(first)
            rest = ["cpu" if isinstance(a, (str, torch.device)) else a for a in args[1:]]
            if "device" in kwargs:
                kwargs["device"] = "cpu"
            return _ToEmulated.apply(func(first, *rest, **kwargs))
        if _is_accelerator(kwargs.get("device")):
            kwargs["device"] = "cpu"
            _TO_ACCELERATOR[0] += 1
            try:
                made = func(*args, **kwargs)
            finally:
                _TO_ACCELERATOR[0] -= 1
            return tree_map(lambda t: Emulated(t) if isinstance(t, torch.Tensor) else t, made)
        return func(*args, **kwargs)


class _DispatchMode(TorchDispatchMode):
    """Operator-level half: unwraps emulated tensors, checks that the arguments share one device, runs the
    operator on the CPU data and wraps the results."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        leaves, _ = tree_flatten((args, kwargs))
        devices = set()
        for t in leaves:
            if isinstance(t, Emulated):
                devices.add("accelerator")
            elif isinstance(t, torch.Tensor) and t.dim() > 0:
                devices.add(t.device.type)
        out_device = "accelerator" if "accelerator" in devices else "cpu"
        if kwargs.get("device") is not None:
            out_device = "accelerator" if _is_accelerator(kwargs["device"]) else "cpu"
            if out_device == "accelerator":
                kwargs["device"] = torch.device("cpu")
        if len(devices) > 1 and func not in _MIXED_OK:
            raise DeviceMismatch(f"{func}: tensors on the accelerator and on the CPU ({sorted(devices)})")
        if _SYNC_LOG is not None and "accelerator" in devices:
            what = _syncs(func, args, kwargs, out_device)
            if what:
                _record_sync(what)
        wrappers: dict[int, Emulated] = {}

        def unwrap(t):
            if isinstance(t, Emulated):
                wrappers[id(t.elem)] = t
                return t.elem
            return t

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))

        def wrap(t):
            if isinstance(t, torch.Tensor) and not isinstance(t, Emulated):
                if id(t) in wrappers:  # an in-place operator returns its argument
                    return wrappers[id(t)]
                if out_device == "accelerator":
                    return Emulated(t)
            return t

        if func in _INPLACE_VIEWS and isinstance(args[0], Emulated):
            # the wrapper's own sizes and strides change too: run the operator on it as the meta tensor it reports
            with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python)):
                func(args[0], *args[1:], **kwargs)
        if func in _CPU_SECOND_OUTPUT:  # (data, batch sizes / lengths): the second stays on the CPU, as on CUDA
            return wrap(out[0]), out[1]
        return tree_map(wrap, out)


@contextlib.contextmanager
def emulated_accelerator():
    """Run the block with ``meta`` as an emulated accelerator (module docstring); yields the device."""
    with _FunctionMode(), _DispatchMode():
        yield DEVICE


def assert_same_on_the_device(run, rel: float = 1e-5) -> None:
    """``run(device)`` -> (loss, scores) on the CPU and on the emulated accelerator: equal within ``rel``."""
    import pytest

    expected = run("cpu")
    with emulated_accelerator() as device:
        loss, scores = run(device)
    assert loss == pytest.approx(expected[0], rel=rel)
    assert scores == pytest.approx(expected[1], rel=rel)
