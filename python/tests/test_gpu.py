"""CuPy and torch arrays with hgas on a GPU (label gpu; tools/gpu-check.sh runs them): hgas
device memory viewed without a copy, framework arrays as local buffers, stream-ordered put_signal
on a framework's stream. ctest runs the test_cupy_* and test_torch_* groups separately (-k), for
the frameworks its interpreter has."""
import numpy as np

import hgas


def _ring():
    me, n = hgas.rank(), hgas.size()
    return me, n, (me + 1) % n, (me + n - 1) % n


# ---- CuPy -----------------------------------------------------------------------------------------

def test_cupy_zero_copy_views_and_buffers():
    import cupy as cp
    cp.cuda.Device(hgas.device_gpu()).use()
    me, n, right, left = _ring()
    a = hgas.zeros(1024, np.float32, "cuda")
    view = cp.from_dlpack(a)
    assert view.data.ptr == a.ptr  # the same memory: no copy
    view[:] = cp.arange(1024, dtype=cp.float32) + me
    cp.cuda.Device().synchronize()
    hgas.barrier()
    got = cp.empty(1024, cp.float32)
    hgas.get(got, a, left)  # a CuPy array as the local buffer
    assert cp.array_equal(got, cp.arange(1024, dtype=cp.float32) + left)
    # No synchronize: CuPy's array names its stream (__cuda_array_interface__ version 3) and hgas
    # waits for it before reading the source.
    hgas.put(a, cp.full(1024, 7, cp.float32), right)
    hgas.barrier()
    assert bool((view == 7).all())
    hgas.free(a)


def test_cupy_stream_put_signal():
    import cupy as cp
    cp.cuda.Device(hgas.device_gpu()).use()
    me, n, right, left = _ring()
    data = hgas.zeros(256, np.int64, "cuda")
    sig = hgas.zeros(1, np.uint64, "cuda")
    src = cp.arange(256, dtype=cp.int64) * (me + 1)
    s = cp.cuda.Stream(non_blocking=True)
    hgas.put_signal_on_stream(data, src, sig, 1, right, stream=s)
    hgas.signal_wait_on_stream(sig, "eq", 1, stream=s)
    hgas.stream_sync(s)
    assert cp.array_equal(cp.from_dlpack(data), cp.arange(256, dtype=cp.int64) * (left + 1))
    hgas.barrier()
    hgas.free(sig)
    hgas.free(data)


# ---- torch ----------------------------------------------------------------------------------------

def test_torch_zero_copy_views_and_buffers():
    import torch
    torch.cuda.set_device(hgas.device_gpu())
    me, n, right, left = _ring()
    a = hgas.zeros((32, 32), np.float64, "cuda")
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.ptr and t.shape == (32, 32) and t.dtype == torch.float64
    t.fill_(me + 0.5)
    torch.cuda.synchronize()
    hgas.barrier()
    out = torch.empty((32, 32), dtype=torch.float64, device="cuda")
    hgas.get(out, a, left)
    assert bool((out == left + 0.5).all())
    cpu = torch.zeros(4, dtype=torch.int64)  # a CPU tensor goes through DLPack
    hgas.get(cpu, a[0:1], right)
    assert bool((cpu.view(torch.float64) == right + 0.5).all())
    three = torch.ones((32, 32), dtype=torch.float64, device="cuda") * 3
    # torch's __cuda_array_interface__ names no stream: hgas waits for torch's current stream
    # through DLPack before it reads the source (no torch.cuda.synchronize needed).
    hgas.put(a, three, right)
    hgas.barrier()
    assert bool((t == 3).all())
    hgas.free(a)


def test_torch_source_still_being_written_on_a_side_stream_is_read_after_the_write():
    # A kernel on a torch side stream sleeps, then fills the source; hgas.put, called at once
    # with that stream current, must read the filled values (through DLPack's stream argument:
    # without it the put reads the zeros, the sleep being far longer than the put). The same for
    # a destination that a side-stream kernel is still reading, and a get into it.
    import torch
    torch.cuda.set_device(hgas.device_gpu())
    me, n, right, left = _ring()
    count = 1 << 20
    a = hgas.zeros(count, np.float32, "cuda")
    hgas.barrier()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        src = torch.zeros(count, device="cuda")
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU cycles
        src.fill_(me + 7)
        hgas.put(a, src, right)
    hgas.barrier()
    assert bool((torch.from_dlpack(a) == left + 7).all())
    with torch.cuda.stream(s):
        dst = torch.full((count,), -1.0, device="cuda")
        torch.cuda._sleep(200_000_000)
        before = dst.clone()  # reads dst after the sleep: the get must not have written it yet
        hgas.get(dst, a, right)
    torch.cuda.synchronize()
    assert bool((before == -1).all()) and bool((dst == me + 7).all())
    hgas.barrier()
    hgas.free(a)


def test_torch_stream_put_and_allreduce_of_a_host_copy():
    import torch
    torch.cuda.set_device(hgas.device_gpu())
    me, n, right, left = _ring()
    data = hgas.zeros(1 << 16, np.float32, "cuda")
    sig = hgas.zeros(1, np.uint64, "cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        src = torch.full((1 << 16,), float(me), device="cuda")
    hgas.put_signal_on_stream(data, src, sig, 5, right, stream=s, op="add")
    hgas.signal_wait_on_stream(sig, ">=", 5, stream=s)
    hgas.quiet_on_stream(s)
    hgas.stream_sync(s)
    t = torch.from_dlpack(data)
    assert bool((t == left).all())
    grad = t.cpu().numpy()
    hgas.allreduce(grad)
    assert np.allclose(grad, n * (n - 1) / 2)
    hgas.barrier()
    hgas.free(sig)
    hgas.free(data)
