"""scripts/unit-security.sh judges the systemd unit: it must fail a unit that
does not parse, one that gives the daemon more than it needs, and one that
takes away what it cannot work without."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

TOP = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = TOP / 'scripts' / 'unit-security.sh'

# What the unit was before it was hardened: valid, but exposure 9.6.
PLAIN = """[Unit]
Description=Opportunistic suspend power manager

[Service]
Type=notify
ExecStart=@SBINDIR@/wakelockd --foreground
Restart=on-failure
RuntimeDirectory=wakelockd

[Install]
WantedBy=multi-user.target
"""


@unittest.skipUnless(shutil.which('systemd-analyze'), 'no systemd-analyze (Debian: systemd)')
class UnitSecurity(unittest.TestCase):
    def run_on(self, text):
        with tempfile.TemporaryDirectory() as d:
            tpl = pathlib.Path(d) / 'unit.in'
            tpl.write_text(text)
            env = dict(os.environ, WL_RESULTS=d)
            p = subprocess.run([str(SCRIPT), str(tpl)], cwd=TOP, env=env,
                               capture_output=True, text=True, timeout=300)
            counts = (pathlib.Path(d) / 'unit-security.counts').read_text().split()
        return p, counts

    def test_shipped_unit_passes(self):
        p, counts = self.run_on((TOP / 'daemon' / 'wakelockd.service.in').read_text())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(counts, ['3', '0', '0'])
        self.assertRegex(p.stdout, r'ok: exposure [0-9.]+ <= ')

    def test_unhardened_unit_fails_on_exposure(self):
        p, counts = self.run_on(PLAIN)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(counts, ['2', '1', '0'])
        self.assertIn('FAIL: exposure', p.stdout)

    def test_broken_unit_fails_verify(self):
        p, counts = self.run_on(PLAIN.replace('Type=notify', 'Type=notifyy'))
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(counts[1] != '0', True)
        self.assertIn('FAIL: systemd-analyze verify', p.stdout)

    def shipped_with(self, old, new):
        text = (TOP / 'daemon' / 'wakelockd.service.in').read_text()
        self.assertIn(old, text)
        return self.run_on(text.replace(old, new))

    def test_protect_clock_fails(self):
        # ProtectClock=yes scores better but drops CAP_WAKE_ALARM.
        p, counts = self.shipped_with('ProtectClock=no', 'ProtectClock=yes')
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(counts, ['2', '1', '0'])
        self.assertIn('ProtectClock=yes drops CAP_WAKE_ALARM', p.stdout)

    def test_sys_power_read_only_fails(self):
        p, counts = self.shipped_with('ReadWritePaths=/sys/power',
                                      'ReadWritePaths=/sys/power\nReadWritePaths=')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('without ReadWritePaths=/sys/power', p.stdout)

    def test_missing_capability_fails(self):
        p, counts = self.shipped_with(' CAP_CHOWN\n', '\n')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('CAP_CHOWN not in CapabilityBoundingSet', p.stdout)


if __name__ == '__main__':
    unittest.main()
