"""Host tests of the QEMU command line the runner builds (scripts/wlguest.py):
an initramfs boot, and a disk boot (the Debian guest) that must never write
to its image.

Run: python3 -m unittest discover -s tests/unit -p 'test_*.py'
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'scripts'))
import wlguest  # noqa: E402


def arg_after(cmd, flag):
    """Every value given to FLAG in CMD."""
    return [cmd[i + 1] for i, a in enumerate(cmd[:-1]) if a == flag]


class QemuCommandTest(unittest.TestCase):
    def test_initramfs_boot_has_no_disk(self):
        cmd = wlguest.qemu_command('bz', 'init.cpio.gz', 'wlplan=x', '/s')
        self.assertEqual(arg_after(cmd, '-initrd'), ['init.cpio.gz'])
        self.assertEqual(arg_after(cmd, '-drive'), [])
        self.assertNotIn('root=/dev/vda', arg_after(cmd, '-append')[0])

    def test_disk_boot_is_copy_on_write(self):
        cmd = wlguest.qemu_command('bz', None, 'wlplan=debian', '/s', disk='/c/debian.img',
                                   tests_disk='t.img', memory='1G')
        self.assertEqual(arg_after(cmd, '-initrd'), [])
        drives = arg_after(cmd, '-drive')
        self.assertEqual(len(drives), 2)
        # The root: vda, behind QEMU's throw-away overlay (the cached image
        # stays pristine); the tests: vdb, read-only.
        self.assertIn('file=/c/debian.img', drives[0])
        self.assertIn('snapshot=on', drives[0].split(','))
        self.assertIn('if=virtio', drives[0].split(','))
        self.assertIn('file=t.img', drives[1])
        self.assertIn('readonly=on', drives[1].split(','))
        append = arg_after(cmd, '-append')[0].split()
        self.assertIn('root=/dev/vda', append)
        self.assertIn('rw', append)
        self.assertIn('wlplan=debian', append)
        self.assertEqual(arg_after(cmd, '-m'), ['1G'])

    def test_overlay_boot_persists_and_scratch_is_writable(self):
        # A run of several boots: the root is the run's qcow2 overlay, with
        # no snapshot=on (whose overlay would end with this QEMU); the
        # scratch disk comes after the tests disk (vdc) and is writable.
        cmd = wlguest.qemu_command('bz', None, 'wlplan=h', '/s', disk='/c/debian.img',
                                   tests_disk='t.img', overlay='/r/root.qcow2',
                                   scratch_disk='/r/scratch.img')
        drives = [d.split(',') for d in arg_after(cmd, '-drive')]
        self.assertEqual(len(drives), 3)
        self.assertIn('file=/r/root.qcow2', drives[0])
        self.assertIn('format=qcow2', drives[0])
        self.assertNotIn('snapshot=on', drives[0])
        self.assertNotIn('file=/c/debian.img', drives[0])
        self.assertIn('readonly=on', drives[1])
        self.assertIn('file=/r/scratch.img', drives[2])
        self.assertIn('format=raw', drives[2])
        self.assertNotIn('readonly=on', drives[2])
        self.assertNotIn('snapshot=on', drives[2])

    def test_overlay_needs_its_disk(self):
        with self.assertRaises(wlguest.GuestError):
            wlguest.qemu_command('bz', 'i.cpio.gz', '', '/s', overlay='/r/root.qcow2')

    def test_exactly_one_of_initramfs_and_disk(self):
        with self.assertRaises(wlguest.GuestError):
            wlguest.qemu_command('bz', None, '', '/s')
        with self.assertRaises(wlguest.GuestError):
            wlguest.qemu_command('bz', 'i.cpio.gz', '', '/s', disk='d.img')

    def test_auto_accel_without_initramfs_is_tcg_and_not_remembered(self):
        d = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'wl-accel-{os.getpid()}')
        os.makedirs(d, exist_ok=True)
        self.addCleanup(lambda: os.rmdir(d))
        # With /dev/kvm the probe would need an initramfs; without it the
        # answer is tcg anyway.  Either way nothing may be cached.
        self.assertEqual(wlguest.choose_accel('bz', None, 'auto', d), 'tcg')
        self.assertEqual(os.listdir(d), [])


class RunDisksTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='wl-rundisks-test-')
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.image = os.path.join(self.dir, 'cached.img')
        with open(self.image, 'wb') as f:
            f.write(b'root' * 1024)

    @unittest.skipUnless(shutil.which('qemu-img'), 'no qemu-img (make deps installs QEMU)')
    def test_overlay_on_the_image_and_a_blank_scratch_all_removed(self):
        before = os.stat(self.image)
        d = wlguest.RunDisks(self.image, self.dir, persist=True, scratch_size=8 << 20)
        self.assertTrue(d.dir.startswith(self.dir + '/'))
        info = json.loads(subprocess.run(['qemu-img', 'info', '--output=json', d.overlay],
                                         check=True, stdout=subprocess.PIPE).stdout)
        self.assertEqual(info['format'], 'qcow2')
        self.assertEqual(info['backing-filename'], os.path.abspath(self.image))
        self.assertEqual(info['backing-filename-format'], 'raw')
        self.assertEqual(os.path.getsize(d.scratch), 8 << 20)
        with open(d.scratch, 'rb') as f:
            self.assertEqual(f.read(4096), bytes(4096))
        d.close()
        self.assertFalse(os.path.exists(d.dir))
        after = os.stat(self.image)
        self.assertEqual((after.st_mtime_ns, after.st_size), (before.st_mtime_ns, before.st_size))

    def test_scratch_alone_keeps_snapshot_boot(self):
        d = wlguest.RunDisks(self.image, self.dir, scratch_size=1 << 20)
        self.addCleanup(d.close)
        self.assertIsNone(d.overlay)
        self.assertEqual(os.path.getsize(d.scratch), 1 << 20)

    def test_failed_overlay_leaves_nothing(self):
        missing = os.path.join(self.dir, 'missing.img')
        with self.assertRaises(wlguest.GuestError):
            wlguest.RunDisks(missing, self.dir, persist=True)
        self.assertEqual(sorted(os.listdir(self.dir)), ['cached.img'])

    def test_parse_size(self):
        self.assertEqual(wlguest.parse_size('1G'), 1 << 30)
        self.assertEqual(wlguest.parse_size('512m'), 512 << 20)
        self.assertEqual(wlguest.parse_size('4096'), 4096)
        for bad in ('', '0', '1T', '-1M', 'M'):
            with self.assertRaises(ValueError):
                wlguest.parse_size(bad)


class BootAgainRequestTest(unittest.TestCase):
    class Ctl:
        def __init__(self):
            self.sent = []

        def control_write(self, text):
            self.sent.append(text)

    def test_refused_without_a_boot_left(self):
        g = self.Ctl()
        a = wlguest.HostActions(g)
        self.assertTrue(a.request('@@HOST 1 boot-again'))
        self.assertTrue(g.sent[0].startswith('@@NAK 1 '), g.sent)
        self.assertIsNone(a.boot_again)

    def test_one_per_boot_allowed(self):
        g = self.Ctl()
        a = wlguest.HostActions(g, boots=2)
        a.request('@@HOST 1 boot-again')
        self.assertEqual(g.sent, ['@@ACK 1'])
        self.assertIsNotNone(a.boot_again)
        a.request('@@HOST 2 boot-again')
        self.assertTrue(g.sent[1].startswith('@@NAK 2 '), g.sent)


if __name__ == '__main__':
    unittest.main()
