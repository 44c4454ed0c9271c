"""Host tests of `make check`'s summary (scripts/summary.sh): the last line
is the sum of every build/results/*.counts file.

Run: python3 -m unittest discover -s tests/unit -p 'test_*.py'
"""
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(HERE, '..', '..', 'scripts', 'summary.sh')


def summarize(files):
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            with open(os.path.join(d, name), 'w') as f:
                f.write(text)
        r = subprocess.run(['sh', SUMMARY, d], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout.splitlines()


class SummaryTest(unittest.TestCase):
    def test_sums_three_numbers_across_stages(self):
        rc, lines = summarize({'harness.counts': '20 0 1\n', 'unit.counts': '182 0 3\n',
                               'guest-platform.counts': '30 0 2\n'})
        self.assertEqual(rc, 0)
        self.assertEqual(lines[-1], '232 passed, 0 failed, 6 skipped')

    def test_old_two_number_files_have_no_skips(self):
        rc, lines = summarize({'e2e.counts': '3 0\n', 'unit.counts': '5 0 2\n'})
        self.assertEqual(rc, 0)
        self.assertEqual(lines[-1], '8 passed, 0 failed, 2 skipped')

    def test_any_failure_fails(self):
        rc, lines = summarize({'unit.counts': '5 0 0\n', 'kernel-patched.stage-failed.counts':
                               '0 1 0\n', 'guest-daemon.counts': '1 2 0\n'})
        self.assertEqual(rc, 1)
        self.assertEqual(lines[-1], '6 passed, 3 failed, 0 skipped')

    def test_malformed_file_is_one_failure(self):
        for bad in ('', 'x 1\n', '1\n', '1 2 3 4\n', '1 -2 0\n'):
            rc, lines = summarize({'unit.counts': '4 0 1\n', 'broken.counts': bad})
            self.assertEqual(rc, 1, bad)
            self.assertEqual(lines[-1], '4 passed, 1 failed, 1 skipped', bad)
            self.assertTrue(any('broken: malformed counts' in l for l in lines), lines)

    def test_leading_zeros_are_decimal(self):
        rc, lines = summarize({'a.counts': '010 0 08\n'})
        self.assertEqual(lines[-1], '10 passed, 0 failed, 8 skipped')

    def test_no_counts_at_all(self):
        rc, lines = summarize({})
        self.assertEqual(rc, 0)
        self.assertEqual(lines[-1], '0 passed, 0 failed, 0 skipped')


if __name__ == '__main__':
    unittest.main()
