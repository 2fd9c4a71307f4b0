#!/usr/bin/env python3
"""The Python package without a GPU (CI): it imports with Debian's python3 from the build folder,
iostune.search(cost="sim") stores a schedule that iostune.report() lists with the fields of
`iostune report --format json`, bad inputs raise the iostune.Error subclass of their kind with
the message the CLI prints, tensors of the wrong dtype, shape or layout are refused without a
copy, and iostune.compile exports a PyTorch module to ONNX the library imports.

    PYTHONPATH=build/python /usr/bin/python3 tests/python/test_package.py --iostune build/cli/iostune
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import iostune

IOSTUNE = None  # the CLI, for comparing messages and reports


def cli(*args):
    run = subprocess.run([IOSTUNE, *args], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def cli_error(*args):
    """The message of a refused CLI command: its one line after 'iostune: error: '."""
    status, _, err = cli(*args)
    assert status == 1, (status, err)
    assert err.startswith("iostune: error: "), err
    return err[len("iostune: error: "):].rstrip("\n")


def quiet(_line):
    pass


def torch_or_skip(case):
    try:
        import torch  # noqa: F401
    except ImportError:
        case.skipTest("this python3 cannot import torch")


class Package(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory(prefix="iostune-py-")
        self.db = os.path.join(self.folder.name, "py.db")

    def tearDown(self):
        self.folder.cleanup()

    def test_imports_and_loads_the_library(self):
        self.assertIn("commit", iostune.version())
        available, why = iostune.gpu_available()
        self.assertEqual(available, why == "")
        self.assertIsInstance(iostune.has_feature("time_budget"), bool)
        self.assertFalse(iostune.has_feature("no such feature"))

    def test_sim_search_is_stored_and_reported_like_the_cli(self):
        notices = []
        one = iostune.search("squeezenet1_1", batch=1, cost="sim", db=self.db, progress=False,
                             notice=notices.append)
        two = iostune.search("squeezenet1_1", batch=2, cost="sim", db=self.db, progress=False,
                             notice=quiet)
        self.assertTrue(one.simulated)
        self.assertGreater(one.latency_ms, 0)
        self.assertEqual(one.strategy, "ios-both")
        self.assertEqual(one.summary["schedule_id"], one.schedule_id)
        self.assertEqual(one.summary["batch"], 1)
        self.assertTrue(any("ESTIMATE" in line for line in notices), notices)
        rows = iostune.report(self.db)
        self.assertEqual([r["schedule_id"] for r in rows], [one.schedule_id, two.schedule_id])
        self.assertEqual([r["tuned_batches"] for r in rows], [[1, 2], [1, 2]])
        for row in rows:  # a simulated search refines too, from a start it names
            self.assertIn(row["origin"]["kind"], ("search", "baseline"))
            self.assertIsNotNone(row["origin"]["refined_from"])
        status, out, err = cli("report", "--format", "json", "--db", self.db)
        self.assertEqual(status, 0, err)
        self.assertEqual(rows, json.loads(out))
        status, out, _ = cli("report", "--db", self.db)
        self.assertIn("squeezenet1_1 on sim:h100, tf32: batch 1, 2", out)

    def test_a_search_summary_has_the_cli_fields(self):
        result = iostune.search("squeezenet1_1", cost="sim", db=self.db, progress=False,
                                notice=quiet)
        status, out, err = cli("search", "--model", "squeezenet1_1", "--cost", "sim",
                               "--format", "json", "--db", self.db)
        self.assertEqual(status, 0, err)
        self.assertEqual(sorted(result.summary), sorted(json.loads(out)))

    def test_time_budget_is_passed_on_or_reported_as_ignored(self):
        notices = []
        iostune.search("squeezenet1_1", cost="sim", db=self.db, progress=False,
                       notice=notices.append, time_budget=30)
        ignored = any("time budget" in line and "ignored" in line for line in notices)
        self.assertEqual(ignored, not iostune.has_feature("time_budget"))
        with self.assertRaises(iostune.BadInputError):
            iostune.search("squeezenet1_1", cost="sim", db=self.db, time_budget=-1)

    def test_memory_limit_reaches_the_search(self):
        # RandWire's concurrent schedules hold ~2.3x the sequential bound: a limit of 1.3 fits
        # them, none (the default) keeps them; the summary says which limit held.
        fitted = iostune.search("randwire", cost="sim", db=self.db, progress=False, notice=quiet,
                                memory_limit=1.3)
        free = iostune.search("randwire", cost="sim", db=self.db, progress=False, notice=quiet)
        limit = fitted.summary["stats"]["memory_limit"]
        self.assertEqual(limit["ratio"], 1.3)
        self.assertLessEqual(limit["arena_bytes"], limit["limit_bytes"])
        self.assertIsNone(free.summary["stats"]["memory_limit"]["ratio"])
        self.assertGreater(free.summary["stats"]["memory_limit"]["arena_bytes"],
                           limit["arena_bytes"])
        with self.assertRaises(iostune.BadInputError):
            iostune.search("randwire", cost="sim", db=self.db, memory_limit=-1)

    def test_bad_inputs_raise_their_kind_with_the_cli_message(self):
        with self.assertRaises(iostune.BadInputError) as caught:
            iostune.search("no_such_model", cost="sim", db=self.db)
        self.assertEqual(str(caught.exception),
                         cli_error("search", "--model", "no_such_model", "--cost", "sim",
                                   "--db", self.db))
        self.assertIsInstance(caught.exception, iostune.Error)
        self.assertIsInstance(caught.exception, ValueError)
        bad_file = os.path.join(self.folder.name, "broken.onnx")
        with open(bad_file, "wb") as f:
            f.write(b"not a protobuf at all")
        with self.assertRaises(iostune.BadInputError) as caught:
            iostune.Model(bad_file)
        self.assertEqual(str(caught.exception), cli_error("show", bad_file))
        with self.assertRaises(iostune.BadInputError) as caught:
            iostune.search("squeezenet1_1", precision="fp8", cost="sim", db=self.db)
        self.assertIn("unknown precision 'fp8'", str(caught.exception))
        with self.assertRaises(iostune.BadInputError):
            iostune.search("squeezenet1_1", batch=0, cost="sim", db=self.db)
        self.assertFalse(os.path.exists(self.db), "a refused search created the database")

    def test_missing_schedules_and_no_gpu(self):
        with self.assertRaises(iostune.MissingScheduleError) as caught:
            iostune.report(self.db)
        self.assertEqual(str(caught.exception), cli_error("report", "--db", self.db))
        iostune.search("squeezenet1_1", cost="sim", db=self.db, progress=False, notice=quiet)
        with self.assertRaises(iostune.MissingScheduleError) as caught:
            iostune.Replayer("squeezenet1_1", [1], db=self.db)
        self.assertIn("simulated cost model", str(caught.exception))
        with self.assertRaises(iostune.MissingScheduleError):
            iostune.lookup("squeezenet1_1", 1, db=self.db)
        if not iostune.gpu_available()[0]:
            with self.assertRaises(iostune.NoGPUError) as caught:
                iostune.Replayer("squeezenet1_1", [1, 4], schedule_source="sequential")
            self.assertIn("needs an NVIDIA GPU", str(caught.exception))
            with self.assertRaises(iostune.NoGPUError):
                iostune.search("squeezenet1_1", cost="measured", db=self.db)

    def test_tensors_of_the_wrong_kind_are_refused_not_copied(self):
        torch_or_skip(self)
        import torch
        from iostune._tensors import TensorSpec, check_tensor
        spec = TensorSpec("half", (3, 8, 8), channels_last=True)
        good = torch.zeros(2, 3, 8, 8, dtype=torch.float16).contiguous(
            memory_format=torch.channels_last)
        cases = {
            "is torch.float32": good.float(),
            "has shape (2, 3, 8, 9)": torch.zeros(2, 3, 8, 9, dtype=torch.float16),
            "is not channels_last": good.contiguous(),
            "is on cpu": good,
            "not a torch.Tensor": [1, 2],
        }
        for words, x in cases.items():
            with self.assertRaises(iostune.BadInputError) as caught:
                check_tensor("input 0", x, spec, None, 0)
            self.assertIn(words, str(caught.exception))
        nchw = TensorSpec("float", (3, 8, 8), channels_last=False)
        with self.assertRaises(iostune.BadInputError) as caught:
            check_tensor("input 0", torch.zeros(2, 3, 8, 16)[:, :, :, ::2], nchw, None, 0)
        self.assertIn("is not contiguous (NCHW)", str(caught.exception))
        with self.assertRaises(iostune.BadInputError) as caught:
            check_tensor("input 1", torch.zeros(3, 3, 8, 8), nchw, 2, 0)
        self.assertIn("holds 3 items; the request has 2", str(caught.exception))

    def test_compile_exports_an_onnx_the_library_imports(self):
        torch_or_skip(self)
        import torch
        torch.manual_seed(0)
        module = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 8, 1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
        example = torch.randn(2, 3, 16, 16)
        path = os.path.join(self.folder.name, "tiny.onnx")
        self.assertEqual(iostune.export_onnx(module, (example,), path), [(5,)])
        model = iostune.Model(path, batch=3)
        self.assertEqual(model.input_shapes, [(3, 3, 16, 16)])
        self.assertEqual(model.output_shapes, [(3, 5, 1, 1)])
        result = iostune.search(path, batch=4, cost="sim", db=self.db, progress=False,
                                notice=quiet)
        self.assertEqual(iostune.report(self.db)[0]["schedule_id"], result.schedule_id)
        if not iostune.gpu_available()[0]:
            kept = os.path.join(self.folder.name, "kept.onnx")
            with self.assertRaises(iostune.NoGPUError):
                iostune.compile(module, example, db=self.db, keep_onnx=kept)
            self.assertEqual(iostune.Model(kept).fingerprint, model.fingerprint)
        with self.assertRaises(iostune.BadInputError):
            iostune.compile(module, torch.randn(2, 3), db=self.db)
        with self.assertRaises(iostune.BadInputError):
            iostune.compile(lambda x: x, example, db=self.db)
        with self.assertRaises(iostune.BadInputError):
            iostune.compile(module, example, batch_sizes=[4, 0], db=self.db)
        with self.assertRaises(iostune.BadInputError) as caught:
            iostune.compile(module, example, precision="fp64", db=self.db)
        self.assertIn("unknown precision 'fp64'", str(caught.exception))


def main():
    global IOSTUNE
    parser = argparse.ArgumentParser()
    parser.add_argument("--iostune", required=True, help="the iostune CLI")
    args, rest = parser.parse_known_args()
    IOSTUNE = args.iostune
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
