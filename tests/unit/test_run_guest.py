"""Host tests of the guest runner's verdict: KTAP/TAP parsing and its failures.

Run: python3 -m unittest discover -s tests/unit -p 'test_*.py'
"""
import contextlib
import importlib.machinery
import io
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_path = os.path.join(HERE, '..', '..', 'scripts', 'run-guest')
_loader = importlib.machinery.SourceFileLoader('run_guest', _path)
_spec = importlib.util.spec_from_loader('run_guest', _loader)
run_guest = importlib.util.module_from_spec(_spec)
_loader.exec_module(run_guest)

KUNIT_OK = """KTAP version 1
1..1
    KTAP version 1
    # Subtest: pm_wakeup
    1..2
    ok 1 lifecycle
        ok 1 param-a
    ok 2 stats
ok 1 pm_wakeup"""

TAP_OK = """TAP version 13
1..3
# some output
ok 1 - a # 0.1s
ok 2 - b # SKIP
ok 3 - c
# WLTEST END"""


def judge(text):
    v = run_guest.Verdict()
    for line in text.splitlines():
        v.feed(line)
    return v, v.finish('plan')


class VerdictTest(unittest.TestCase):
    def test_all_passing(self):
        v, ok = judge(KUNIT_OK + '\n' + TAP_OK)
        self.assertTrue(ok, v.problems)
        self.assertEqual((v.passed, v.failed, v.skipped), (2, 0, 1))
        self.assertEqual(v.kunit_cases, [2, 0, 0])
        self.assertEqual(v.totals(ok), (4, 0, 1))

    def test_kunit_case_failure_fails_the_run(self):
        text = KUNIT_OK.replace('    ok 2 stats', '    not ok 2 stats').replace(
            'ok 1 pm_wakeup', 'not ok 1 pm_wakeup')
        v, ok = judge(text + '\n' + TAP_OK)
        self.assertFalse(ok)
        self.assertEqual(v.kunit_cases, [1, 1, 0])

    def test_guest_failure(self):
        v, ok = judge(TAP_OK.replace('ok 3 - c', 'not ok 3 - c # exit 1'))
        self.assertFalse(ok)
        self.assertEqual(v.failed, 1)

    def test_missing_end_marker(self):
        v, ok = judge(TAP_OK.replace('# WLTEST END', ''))
        self.assertFalse(ok)
        self.assertIn('never printed', ' '.join(v.problems))

    def test_expected_poweroff_passes_the_last_test(self):
        v = run_guest.Verdict()
        for line in 'TAP version 13\n1..2\nok 1 - a\n# powering off'.splitlines():
            v.feed(line)
        run_guest.end_by_poweroff(v, 'critical')
        self.assertTrue(v.finish('plan'), v.problems)
        self.assertEqual((v.passed, v.failed), (2, 0))

    def test_expected_poweroff_before_the_last_test_fails(self):
        v = run_guest.Verdict()
        for line in 'TAP version 13\n1..3\nok 1 - a'.splitlines():
            v.feed(line)
        run_guest.end_by_poweroff(v, 'critical')
        self.assertFalse(v.finish('plan'))
        self.assertIn('tests: plan says 3, 2 reported', v.problems)

    def test_plan_count_mismatch(self):
        v, ok = judge(TAP_OK.replace('ok 3 - c\n', ''))
        self.assertFalse(ok)
        self.assertIn('plan says 3', ' '.join(v.problems))

    def test_no_plan_at_all(self):
        v, ok = judge('some kernel line\n# WLTEST END')
        self.assertFalse(ok)

    def test_bail_out(self):
        v, ok = judge("TAP version 13\nBail out! no plan named 'x'\n# WLTEST END")
        self.assertFalse(ok)

    def test_splat_pattern(self):
        for line in ('BUG: KASAN: slab-use-after-free in foo',
                     'WARNING: CPU: 0 PID: 1 at drivers/x.c:1 f+0x1/0x2',
                     'WARNING: possible circular locking dependency detected',
                     'BUG: sleeping function called from invalid context at x'):
            self.assertTrue(run_guest.SPLAT.search(line), line)
        self.assertFalse(run_guest.SPLAT.search('PM: suspend exit'))

    def test_freeze_abort_traces_are_not_splats(self):
        f = run_guest.SplatFilter()
        self.assertTrue(f.is_splat('Call Trace:'))
        self.assertFalse(f.is_splat('Freezing user space processes aborted after 0.000 seconds '
                                    '(2 tasks refusing to freeze, wq_busy=0):'))
        self.assertFalse(f.is_splat('Call Trace:'))
        self.assertFalse(f.is_splat(' <TASK>'))
        # A real warning inside the dump still counts.
        self.assertTrue(f.is_splat('WARNING: CPU: 0 PID: 1 at kernel/power/process.c:1'))
        self.assertFalse(f.is_splat('Restarting tasks ... done.'))
        self.assertTrue(f.is_splat('Call Trace:'))
        self.assertFalse(f.is_splat('# Call Trace: (test output)'))

    def test_kunit_skipped_case_counts_as_skipped(self):
        text = KUNIT_OK.replace('    ok 2 stats', '    ok 2 stats # SKIP no wakeup irq here')
        v, ok = judge(text + '\n' + TAP_OK)
        self.assertTrue(ok, v.problems)
        self.assertEqual(v.kunit_cases, [1, 0, 1])
        # 2 guest tests + 1 KUnit case passed; 1 guest test + 1 case skipped.
        self.assertEqual(v.totals(ok), (3, 0, 2))
        self.assertIn('KUnit case stats: no wakeup irq here', v.skips)

    def test_kunit_skip_directive_any_case(self):
        text = KUNIT_OK.replace('    ok 2 stats', '    ok 2 stats # skip')
        v, ok = judge(text + '\n' + TAP_OK)
        self.assertEqual(v.kunit_cases, [1, 0, 1])
        self.assertIn('KUnit case stats: no reason given', v.skips)

    def test_kunit_suite_skipped_whole_counts_once(self):
        text = ('KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: pm_wakeup\n'
                '    1..0\nok 1 pm_wakeup # SKIP not built for this kernel')
        v, ok = judge(text + '\n' + TAP_OK)
        self.assertTrue(ok, v.problems)
        self.assertEqual(v.kunit_cases, [0, 0, 1])
        self.assertIn('KUnit suite pm_wakeup: not built for this kernel', v.skips)

    def test_guest_skip_counts_as_skipped_with_its_reason(self):
        v, ok = judge(TAP_OK.replace('ok 2 - b # SKIP', 'ok 2 - b # SKIP no modem on ttyS1'))
        self.assertTrue(ok, v.problems)
        self.assertEqual((v.passed, v.failed, v.skipped), (2, 0, 1))
        self.assertEqual(v.totals(ok), (2, 0, 1))
        self.assertEqual(v.skips, ['guest test b: no modem on ttyS1'])

    def test_not_ok_with_skip_is_a_failure(self):
        v, ok = judge(TAP_OK.replace('ok 2 - b # SKIP', 'not ok 2 - b # SKIP'))
        self.assertFalse(ok)
        self.assertEqual(v.totals(ok), (2, 1, 0))

    def test_failed_run_without_failed_point_is_one_failure(self):
        v, ok = judge(TAP_OK.replace('# WLTEST END', ''))
        self.assertFalse(ok)
        self.assertEqual(v.totals(ok), (2, 1, 1))

    def test_measurement_is_shown_not_counted(self):
        text = TAP_OK.replace('# WLTEST END',
                              '# deferred: 3 of 20\n'
                              '# WLTEST MEASURED serial-suspend 61.0s, figures above\n'
                              '# WLTEST END')
        v, ok = judge(text)
        self.assertTrue(ok, v.problems)
        self.assertEqual(v.totals(ok), (2, 0, 1))
        self.assertEqual(v.measured, ['serial-suspend: 61.0s, figures above'])

    def test_counts_file_has_three_numbers(self):
        v, ok = judge(KUNIT_OK.replace('    ok 2 stats', '    ok 2 stats # SKIP x')
                      + '\n' + TAP_OK.replace('ok 3 - c', 'not ok 3 - c # exit 1'))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'guest-x.counts')
            run_guest.write_counts(path, v.totals(ok))
            with open(path) as f:
                text = f.read()
        self.assertRegex(text, r'^\d+ \d+ \d+\n$')
        self.assertEqual(text, '2 1 2\n')


# run-plan itself, run on the host with busybox (the guest's shell) where
# present: its paths are pointed into a temporary directory.
SHELL = shutil.which('busybox')


class RunPlanTest(unittest.TestCase):
    def run_plan(self, plan, tests):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        os.makedirs(os.path.join(d, 'tests', 'plans'))
        os.makedirs(os.path.join(d, 'tmp'))
        with open(os.path.join(d, 'tests', 'plans', 'p'), 'w') as f:
            f.write(plan)
        for name, body in tests.items():
            with open(os.path.join(d, 'tests', name + '.sh'), 'w') as f:
                f.write(body)
        with open(os.path.join(HERE, '..', '..', 'scripts', 'guest', 'run-plan')) as f:
            src = f.read()
        subst = {'/tests/': d + '/tests/', '/dev/ttyS2': '/dev/null',
                 'cd /tmp ': 'cd ' + d + '/tmp ', '/tmp/': d + '/tmp/'}
        src = re.sub('|'.join(re.escape(k) for k in subst), lambda m: subst[m.group(0)], src)
        script = os.path.join(d, 'run-plan')
        with open(script, 'w') as f:
            f.write(src)
        cmd = [SHELL, 'sh', script, 'p'] if SHELL else ['sh', script, 'p']
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        return out, judge(out)

    TESTS = {'pass': 'echo fine\nexit 0\n',
             'skip': 'echo "SKIP: no modem on ttyS1"\nexit 77\n',
             'fail': 'echo broken\nexit 3\n',
             'figures': 'echo "deferred: 2 of 20"\nexit 0\n',
             'broken': 'echo "no wakeup"\nexit 1\n'}

    def test_skip_reason_and_counts(self):
        out, (v, ok) = self.run_plan('# a plan\npass\nskip\nfail\n', self.TESTS)
        self.assertIn('1..3', out)
        self.assertIn('ok 2 - skip # SKIP no modem on ttyS1', out)
        self.assertIn('not ok 3 - fail # exit 3', out)
        self.assertFalse(ok)
        self.assertEqual(v.totals(ok), (1, 1, 1))
        self.assertEqual(v.skips, ['guest test skip: no modem on ttyS1'])

    def test_measurement_is_no_test_point(self):
        out, (v, ok) = self.run_plan('pass\nmeasure:figures\n', self.TESTS)
        self.assertIn('1..1', out)
        self.assertIn('# deferred: 2 of 20', out)
        self.assertNotIn('ok 2', out)
        self.assertTrue(ok, v.problems)
        self.assertEqual(v.totals(ok), (1, 0, 0))
        self.assertEqual(len(v.measured), 1)
        self.assertTrue(v.measured[0].startswith('figures: '), v.measured)

    def test_failed_measurement_fails_the_run(self):
        out, (v, ok) = self.run_plan('pass\nmeasure:broken\n', self.TESTS)
        self.assertIn('Bail out! measurement broken failed: exit 1', out)
        self.assertFalse(ok)
        self.assertEqual(v.totals(ok), (1, 1, 0))


class FakeGuest:
    """Stands in for wlguest.Guest in run-guest's main(): each QEMU start
    prints the next boot's console lines, then exits."""
    boots = []        # per start: the console lines of that boot
    started = []      # per start: the keyword arguments it got

    def __init__(self, kernel, initrd, append='', **kw):
        FakeGuest.started.append(kw)
        self.lines = list(FakeGuest.boots[len(FakeGuest.started) - 1])
        self.acks = []

    def poll(self, timeout):
        if not self.lines:
            return None
        return [self.lines.pop(0)]

    def control_write(self, text):
        self.acks.append(text)

    def close(self):
        pass


class FakeDisks:
    made = []

    def __init__(self, disk, parent, persist=False, scratch_size=0):
        self.overlay = os.path.join(parent, 'root.qcow2') if persist else None
        self.scratch = os.path.join(parent, 'scratch.img') if scratch_size else None
        self.closed = False
        FakeDisks.made.append(self)

    def close(self):
        self.closed = True


class BootAgainTest(unittest.TestCase):
    """run-guest --boots: the guest powers off after "host boot-again", the
    same disks boot again and the plan is read on as one run."""
    FIRST = ['TAP version 13', '1..2', 'ok 1 - before', '@@HOST 1 boot-again',
             'PM: hibernation: hibernation entry']
    RESUMED = ['PM: Image loading done', '# resumed', 'ok 2 - hibernate', '# WLTEST END']

    def run_main(self, boots, argv):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        FakeGuest.boots, FakeGuest.started, FakeDisks.made = boots, [], []
        saved = run_guest.Guest, run_guest.RunDisks, sys.argv
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        self.addCleanup(lambda: setattr(run_guest, 'Guest', saved[0]))
        self.addCleanup(lambda: setattr(run_guest, 'RunDisks', saved[1]))
        self.addCleanup(lambda: setattr(sys, 'argv', saved[2]))
        run_guest.Guest, run_guest.RunDisks = FakeGuest, FakeDisks
        counts = os.path.join(d, 'counts')
        sys.argv = ['run-guest', '--kernel', 'bz', '--disk', 'd.img', '--plan', 'h',
                    '--log', os.path.join(d, 'h.log'), '--counts', counts, '--timeout', '30'] + argv
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()) as err:
            rc = run_guest.main()
        with open(counts) as f:
            return rc, f.read().split(), out.getvalue() + err.getvalue()

    def test_resumed_plan_is_one_run(self):
        rc, counts, out = self.run_main([self.FIRST, self.RESUMED],
                                        ['--boots', '2', '--scratch-disk', '1M'])
        self.assertEqual(rc, 0, out)
        self.assertEqual(counts, ['2', '0', '0'])
        self.assertEqual(len(FakeGuest.started), 2)
        disks = FakeDisks.made[0]
        # Both boots on the same persistent overlay and scratch disk, the
        # second appending to the console log; removed at the end.
        for kw in FakeGuest.started:
            self.assertEqual(kw['overlay'], disks.overlay)
            self.assertEqual(kw['scratch_disk'], disks.scratch)
        self.assertIsNotNone(disks.overlay)
        self.assertEqual([kw['log_append'] for kw in FakeGuest.started], [False, True])
        self.assertTrue(disks.closed)
        self.assertIn('boot 2 of 2 on the same disks', out)

    def test_fresh_plan_after_boot_again_fails(self):
        fresh = ['TAP version 13', '1..2', 'ok 1 - before', 'ok 2 - hibernate', '# WLTEST END']
        rc, counts, out = self.run_main([self.FIRST, fresh], ['--boots', '2'])
        self.assertEqual(rc, 1)
        self.assertIn('did not resume', out)
        self.assertEqual(counts[1], '1')
        self.assertTrue(FakeDisks.made[0].closed)

    def test_without_boots_the_request_is_refused_and_poweroff_ends_the_run(self):
        rc, counts, out = self.run_main([self.FIRST, self.RESUMED], [])
        self.assertEqual(rc, 1)
        self.assertEqual(len(FakeGuest.started), 1)
        self.assertEqual(FakeDisks.made, [])
        self.assertIn('never printed "# WLTEST END"', out)

    def test_boots_need_a_disk(self):
        saved = sys.argv
        self.addCleanup(lambda: setattr(sys, 'argv', saved))
        sys.argv = ['run-guest', '--kernel', 'bz', '--initrd', 'i.gz', '--plan', 'h', '--boots', '2']
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            run_guest.main()


if __name__ == '__main__':
    unittest.main()
