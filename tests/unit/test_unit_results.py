"""Host tests of make check's unit-stage counter (scripts/unit-results.py):
cmocka cases counted from meson's test log, skips with their reasons, and
a program that dies without a cmocka failure line counted as a failure.

Run: python3 -m unittest discover -s tests/unit -p 'test_*.py'
"""
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTER = os.path.join(HERE, '..', '..', 'scripts', 'unit-results.py')

PASS3 = ('[==========] Running 3 test(s).\n[ RUN      ] a\n[       OK ] a\n'
         '[ RUN      ] b\n[       OK ] b\n[ RUN      ] c\n[       OK ] c\n'
         '[==========] 3 test(s) run.\n[  PASSED  ] 3 test(s).\n')
SKIP1 = ('[==========] Running 2 test(s).\n[ RUN      ] fine\n[       OK ] fine\n'
         '[ RUN      ] needs_s3\nno suspend support here\n[  SKIPPED ] needs_s3\n'
         '[==========] 2 test(s) run.\n[  PASSED  ] 1 test(s).\n'
         '[  SKIPPED ] 1 test(s), listed below:\n[  SKIPPED ] needs_s3\n')
FAIL1 = ('[==========] Running 2 test(s).\n[ RUN      ] x\n[       OK ] x\n'
         '[ RUN      ] y\n[  ERROR   ] --- 0 != 1\n[  FAILED  ] y\n'
         '[==========] 2 test(s) run.\n[  PASSED  ] 1 test(s).\n'
         '[  FAILED  ] 1 test(s), listed below:\n[  FAILED  ] y\n\n 1 FAILED TEST(S)\n')
CRASH = '[==========] Running 4 test(s).\n[ RUN      ] a\n'


def entry(name, out, rc=0, result='OK', stderr=''):
    return {'name': 'wakelockd:unit / ' + name, 'stdout': out, 'stderr': stderr,
            'returncode': rc, 'result': result}


def count(*builds):
    """Run the counter on build dirs given as lists of entries (None: no log)."""
    with tempfile.TemporaryDirectory() as d:
        specs = []
        for i, entries in enumerate(builds):
            b = os.path.join(d, 'b%d' % i)
            os.makedirs(os.path.join(b, 'meson-logs'))
            if entries is not None:
                with open(os.path.join(b, 'meson-logs', 'testlog.json'), 'w') as f:
                    for e in entries:
                        f.write(json.dumps(e) + '\n')
            specs.append('v%d:%s' % (i, b))
        r = subprocess.run(['python3', COUNTER, os.path.join(d, 'res')] + specs,
                           capture_output=True, text=True, timeout=30)
        with open(os.path.join(d, 'res', 'unit.counts')) as f:
            counts = f.read().split()
    return r.returncode, [int(x) for x in counts], r.stdout


class UnitResultsTest(unittest.TestCase):
    def test_cases_are_counted_not_programs(self):
        rc, counts, _ = count([entry('t1', PASS3), entry('t2', PASS3)])
        self.assertEqual((rc, counts), (0, [6, 0, 0]))

    def test_a_skip_is_a_skip_with_its_reason(self):
        rc, counts, out = count([entry('t', SKIP1)])
        self.assertEqual((rc, counts), (0, [1, 0, 1]))
        self.assertIn('skipped: needs_s3: no suspend support here', out)

    def test_a_failed_case_fails_the_stage(self):
        rc, counts, out = count([entry('t', FAIL1, rc=1, result='FAIL')])
        self.assertEqual((rc, counts), (1, [1, 1, 0]))
        self.assertIn('FAIL  v0', out)

    def test_a_crash_without_a_summary_is_one_failure(self):
        rc, counts, _ = count([entry('t', CRASH, rc=-11, result='FAIL')])
        self.assertEqual((rc, counts), (1, [0, 1, 0]))

    def test_a_timeout_is_a_failure_even_after_passes(self):
        rc, counts, _ = count([entry('t', PASS3, rc=-15, result='TIMEOUT')])
        self.assertEqual((rc, counts), (1, [3, 1, 0]))

    def test_sums_over_build_directories(self):
        rc, counts, _ = count([entry('t', PASS3)], [entry('t', SKIP1)])
        self.assertEqual((rc, counts), (0, [4, 0, 1]))

    def test_a_build_without_a_log_is_a_failure(self):
        rc, counts, out = count([entry('t', PASS3)], None)
        self.assertEqual((rc, counts), (1, [3, 1, 0]))
        self.assertIn('no test log', out)


if __name__ == '__main__':
    unittest.main()
