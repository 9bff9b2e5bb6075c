#!/usr/bin/env python3
"""Tests of check_skips.py on hand-written ctest JUnit files: an unlisted skip fails the
run and is named with its message; listed skips, and listed tests that ran, pass."""
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_skips  # noqa: E402


def gtest_output(name, skipped_with=None):
    """What a GoogleTest binary run by ctest prints for one test."""
    lines = [f"Note: Google Test filter = {name}", f"[ RUN      ] {name}"]
    if skipped_with is None:
        lines.append(f"[       OK ] {name} (3 ms)")
    else:
        lines += ["/src/tests/x_test.cc:42: Skipped", skipped_with, f"[  SKIPPED ] {name} (0 ms)",
                  "[  SKIPPED ] 1 test, listed below:", f"[  SKIPPED ] {name}"]
    return "\n".join(lines) + "\n"


def testcase(name, skipped_with=None, skipped_element=True):
    status, element = "run", ""
    if skipped_with is not None and skipped_element:
        status, element = "notrun", '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>'
    output = (gtest_output(name, skipped_with).replace("&", "&amp;").replace("<", "&lt;")
              .replace(">", "&gt;"))
    return (f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">'
            f"{element}<system-out>{output}</system-out></testcase>")


def junit(*cases):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" tests="'
            f'{len(cases)}">' + "".join(cases) + "</testsuite>\n")


ALLOWED = """# tests that depend on the machine's PMU
Counters.NeedCycles   the machine has no PMU (a KVM guest)

Stat.NoPmuError       runs only where there is no PMU
"""


class CheckSkipsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.allowed = self.write("allowed.txt", ALLOWED)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def check(self, *junit_texts, allowed=None):
        paths = [self.write(f"run{i}.xml", text) for i, text in enumerate(junit_texts)]
        out = io.StringIO()
        status = check_skips.check(allowed or self.allowed, paths, out)
        return status, out.getvalue()

    def test_an_unlisted_skip_fails_naming_the_test_and_its_message(self):
        status, out = self.check(junit(
            testcase("Gzip.RoundTrip"),
            testcase("Flush.OnAFullDisk", skipped_with="cannot mount a tmpfs here <needs root>"),
            testcase("Counters.NeedCycles", skipped_with="no cycles event")))
        self.assertEqual(status, 1, out)
        self.assertIn("Flush.OnAFullDisk skipped and is not in", out)
        self.assertIn("cannot mount a tmpfs here <needs root> [/src/tests/x_test.cc:42]", out)
        self.assertNotIn("Counters.NeedCycles skipped and is not", out)
        self.assertNotIn("Gzip.RoundTrip", out)

    def test_a_skip_seen_only_in_the_output_counts(self):
        # A test without ctest's skip regex (no <skipped/>) that printed GoogleTest's line.
        status, out = self.check(junit(testcase("Daemon.Runs", skipped_with="needs root",
                                                skipped_element=False)))
        self.assertEqual(status, 1, out)
        self.assertIn("Daemon.Runs skipped", out)
        self.assertIn("needs root", out)

    def test_listed_skips_and_listed_tests_that_ran_pass(self):
        status, out = self.check(junit(
            testcase("Counters.NeedCycles", skipped_with="no cycles event"),
            testcase("Stat.NoPmuError"),
            testcase("Gzip.RoundTrip")))
        self.assertEqual(status, 0, out)
        self.assertIn("3 tests, 0 unlisted skips, 1 allowed skips: Counters.NeedCycles", out)

    def test_every_file_is_checked(self):
        status, out = self.check(junit(testcase("A.Runs")),
                                 junit(testcase("Asan.Only", skipped_with="no asan here")))
        self.assertEqual(status, 1, out)
        self.assertIn("run1.xml: Asan.Only skipped", out)

    def test_names_match_exactly(self):
        # A parameterized instance is not covered by its suite's name, nor by a prefix.
        status, out = self.check(junit(
            testcase("Split/Counters.NeedCycles/0", skipped_with="no cycles event"),
            testcase("Counters.NeedCyclesToo", skipped_with="no cycles event")))
        self.assertEqual(status, 1, out)
        self.assertIn("Split/Counters.NeedCycles/0 skipped", out)
        self.assertIn("Counters.NeedCyclesToo skipped", out)

    def test_a_run_without_tests_fails(self):
        status, out = self.check(junit())
        self.assertEqual(status, 1, out)
        self.assertIn("no test ran", out)

    def test_an_allowed_skip_without_a_reason_is_bad_input(self):
        allowed = self.write("no_reason.txt", "Counters.NeedCycles\n")
        status, out = self.check(junit(testcase("A.Runs")), allowed=allowed)
        self.assertEqual(status, 2, out)
        self.assertIn("no_reason.txt:1: expected 'Suite.Test  reason'", out)

    def test_unreadable_junit_is_bad_input(self):
        status, out = self.check("<testsuite><testcase name=")
        self.assertEqual(status, 2, out)
        self.assertIn("cannot read as JUnit XML", out)
        out = io.StringIO()
        status = check_skips.check(self.allowed, [os.path.join(self.dir.name, "none.xml")], out)
        self.assertEqual(status, 2, out.getvalue())


if __name__ == "__main__":
    unittest.main()
