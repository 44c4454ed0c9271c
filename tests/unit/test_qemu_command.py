"""Host tests of the QEMU command line the runner builds (scripts/wlguest.py):
an initramfs boot, and a disk boot (the Debian guest) that must never write
to its image.

Run: python3 -m unittest discover -s tests/unit -p 'test_*.py'
"""
import os
import sys
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


if __name__ == '__main__':
    unittest.main()
