"""`toolgate keys init`: the keys and credentials of a cluster, in a directory of the operator's.

Run with the toolgate binary as the only argument.
"""
import base64
import os
import pathlib
import re
import stat
import subprocess
import sys
import tempfile
import unittest

TOOLGATE = None
ROOT = pathlib.Path(__file__).resolve().parents[2]


def keys_init(directory):
    return subprocess.run([TOOLGATE, "keys", "init", "--dir", str(directory)],
                          capture_output=True, text=True, timeout=60)


class KeysInitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name) / "keys"

    def tearDown(self):
        self.tmp.cleanup()

    def mode(self, name):
        return stat.S_IMODE(os.stat(self.dir / name).st_mode)

    def test_creates_every_key_and_credential_private_to_its_owner(self):
        run = keys_init(self.dir)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(self.dir).st_mode), 0o700)
        # 32 random bytes each: the secrets master key, the MCP session key, the executor pool's
        # X25519 key pair (libsodium crypto_box).
        for name in ("master.key", "mcp_session.key", "executor.key", "executor.pub"):
            raw = base64.b64decode((self.dir / name).read_text().strip(), validate=True)
            self.assertEqual(len(raw), 32, name)
        self.assertNotEqual((self.dir / "master.key").read_text(),
                            (self.dir / "mcp_session.key").read_text())
        self.assertEqual(self.mode("executor.pub"), 0o644)
        for name in ("master.key", "mcp_session.key", "executor.key", "postgres.password",
                     "redis.password"):
            self.assertEqual(self.mode(name), 0o600, name)
        # One NATS password per user of deploy/nats.conf.
        users = {u.lower() for u in re.findall(r"\$NATS_PASSWORD_([A-Z]+)",
                                                 (ROOT / "deploy" / "nats.conf").read_text())}
        self.assertTrue(users)
        for user in users:
            self.assertEqual(self.mode("nats-%s.password" % user), 0o600, user)
        # No secret is printed: only file names and commands.
        for name in ("master.key", "executor.key", "postgres.password"):
            self.assertNotIn((self.dir / name).read_text().strip(), run.stdout)
        self.assertIn("kubectl create secret generic toolgate-keys", run.stdout)

    def test_running_again_keeps_what_exists(self):
        self.assertEqual(keys_init(self.dir).returncode, 0)
        before = {p.name: p.read_bytes() for p in self.dir.iterdir()}
        (self.dir / "redis.password").unlink()
        again = keys_init(self.dir)
        self.assertEqual(again.returncode, 0, again.stderr)
        after = {p.name: p.read_bytes() for p in self.dir.iterdir()}
        self.assertEqual(set(after), set(before))
        for name in before:
            if name != "redis.password":
                self.assertEqual(after[name], before[name], name)
        self.assertIn("created " + str(self.dir / "redis.password"), again.stdout)
        self.assertIn("kept    " + str(self.dir / "master.key"), again.stdout)

    def test_an_unexpected_argument_is_refused(self):
        run = subprocess.run([TOOLGATE, "keys", "init", "extra"], capture_output=True, text=True,
                             cwd=self.tmp.name, timeout=60)
        self.assertEqual(run.returncode, 2)
        self.assertIn("unexpected argument 'extra'", run.stderr)
        self.assertFalse((pathlib.Path(self.tmp.name) / "keys").exists())


if __name__ == "__main__":
    TOOLGATE = sys.argv.pop(1)
    unittest.main()
