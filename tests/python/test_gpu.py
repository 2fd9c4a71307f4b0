#!/usr/bin/env python3
"""The Python package on the GPU (run on the H100 with the device's python3 and PyTorch; without
a GPU it prints why and exits 77, which CTest reports as skipped): iostune.compile of a small
two-branch CNN tuned for batch sizes 1 and 4, run on CUDA tensors on the caller's stream:
within the precision's tolerance of PyTorch, a request of 3 equal to the first 3 items of a
request of 4 (the same graph, padded), 9 items in chunks, fp16 channels_last natively, `out=`,
and the refusals of tensors it would have to copy.

    PYTHONPATH=build/python python3 tests/python/test_gpu.py
"""
import os
import sys
import tempfile
import unittest

import iostune

SKIP = 77


class TwoBranch(object):
    """Built lazily so that the module imports without torch."""

    @staticmethod
    def make():
        import torch
        nn = torch.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1),
                                          nn.BatchNorm2d(32), nn.ReLU())
                self.a = nn.Sequential(nn.Conv2d(32, 32, 1), nn.ReLU(),
                                       nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
                self.b = nn.Sequential(nn.Conv2d(32, 32, 1), nn.ReLU())
                self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

            def forward(self, x):
                y = self.stem(x)
                return self.head(torch.cat([self.a(y), self.b(y)], 1))

        torch.manual_seed(0)
        return Net().eval().cuda()


def close(case, got, want, tolerance):
    scale = max(1.0, want.abs().max().item())
    case.assertLessEqual((got.float() - want.float()).abs().max().item(), tolerance * scale)


class OnTheGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch
        cls.torch = torch
        cls.folder = tempfile.TemporaryDirectory(prefix="iostune-gpu-py-")
        cls.db = os.path.join(cls.folder.name, "gpu.db")
        cls.module = TwoBranch.make()
        g = torch.Generator(device="cuda").manual_seed(1)
        cls.x = torch.rand(9, 3, 64, 64, device="cuda", generator=g) * 2 - 1
        cls.fast = iostune.compile(cls.module, cls.x[:4], batch_sizes=[1, 4], db=cls.db,
                                   progress=False)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_outputs_match_pytorch_at_every_size(self):
        torch = self.torch
        with torch.no_grad():
            for n in (1, 3, 4, 9):
                want = self.module(self.x[:n])
                got = self.fast(self.x[:n].contiguous())
                self.assertEqual(got.shape, want.shape)
                self.assertEqual(got.dtype, torch.float32)
                close(self, got, want, 1e-2)

    def test_a_padded_request_equals_the_full_batch(self):
        four = self.fast(self.x[:4].contiguous())
        three = self.fast(self.x[:3].contiguous())
        self.assertTrue(self.torch.equal(three, four[:3]))

    def test_the_callers_stream_and_out(self):
        torch = self.torch
        want = self.fast(self.x[:4].contiguous())
        side = torch.cuda.Stream()
        out = torch.empty_like(want)
        with torch.cuda.stream(side):
            self.fast(self.x[:4].contiguous(), out=out.view(4, 10, 1, 1))
        side.synchronize()
        self.assertTrue(torch.equal(out, want))

    def test_tensors_it_would_have_to_copy_are_refused(self):
        torch = self.torch
        with self.assertRaises(iostune.BadInputError):
            self.fast(self.x[:4].double())
        with self.assertRaises(iostune.BadInputError):
            self.fast(self.x[:4].contiguous(memory_format=torch.channels_last))
        with self.assertRaises(iostune.BadInputError):
            self.fast(self.x[:4].cpu())

    def test_fp16_channels_last_runs_natively(self):
        torch = self.torch
        module = TwoBranch.make().half().to(memory_format=torch.channels_last)
        x = self.x[:4].half().contiguous(memory_format=torch.channels_last)
        # Channels-last, so that the example's layout is the schedule's (a search of both
        # layouts could keep NCHW, and then this input would be refused, rightly).
        fast = iostune.compile(module, x, precision="fp16", batch_sizes=[4], db=self.db,
                               progress=False, search_options={"layout": "nhwc"})
        self.assertTrue(fast.replayer.native_io)
        got = fast(x[:3].contiguous(memory_format=torch.channels_last))
        self.assertEqual(got.dtype, torch.float16)
        with torch.no_grad():
            close(self, got, module(x[:3]), 2e-2)
        with self.assertRaises(iostune.BadInputError):
            fast(x.contiguous())

    def test_request_timing(self):
        t = self.fast.replayer.benchmark(3, iterations=20, warmup=2)
        self.assertGreater(t["median_ms"], 0)
        self.assertAlmostEqual(t["throughput_per_s"], 3000.0 / t["median_ms"], delta=1e-6 * 3e6)


def main():
    try:
        import torch
    except ImportError as e:
        print("skipped: this python3 cannot import torch (%s)" % e)
        return SKIP
    available, why = iostune.gpu_available()
    if not available or not torch.cuda.is_available():
        print("skipped: the Python GPU tests need a CUDA device (%s)"
              % (why or "torch.cuda.is_available() is False"))
        return SKIP
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
