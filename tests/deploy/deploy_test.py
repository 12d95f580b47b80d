"""compose.yaml and the Kubernetes manifests, checked by parsing (no Docker engine here).

Every service under services/ must be deployed by both, with the binary of its name, and every
environment variable they set must be one a Toolgate binary reads.
"""
import os
import pathlib
import unittest

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVICES = sorted(p.name for p in (ROOT / "services").iterdir() if (p / "main.cc").exists())


class ComposeTest(unittest.TestCase):
    def setUp(self):
        self.doc = yaml.safe_load((ROOT / "compose.yaml").read_text())

    def test_every_service_runs_its_binary(self):
        services = self.doc["services"]
        for name in SERVICES:
            self.assertIn(name, services, name)
            self.assertEqual(services[name]["command"][0], "toolgate-" + name)
        for infra in ("nats", "redis", "postgres"):
            self.assertIn(infra, services)

    def test_services_reach_the_infrastructure(self):
        env = self.doc["services"]["billing"]["environment"]
        self.assertTrue(env["TOOLGATE_NATS_URL"].startswith("nats://nats:"))
        self.assertTrue(env["TOOLGATE_REDIS_URL"].startswith("redis://redis:"))
        self.assertIn("@postgres:", env["TOOLGATE_POSTGRES_URL"])
        self.assertEqual(self.doc["services"]["edge"]["ports"], ["8080:8080"])

    def test_edges_share_the_mcp_session_key(self):
        env = self.doc["services"]["edge"]["environment"]
        self.assertEqual(env["TOOLGATE_MCP_SESSION_KEY_FILE"], "/keys/mcp_session.key")
        self.assertIn("./keys:/keys:ro", self.doc["services"]["edge"]["volumes"])

    def test_nats_config_allows_large_messages(self):
        conf = (ROOT / "deploy" / "nats.conf").read_text()
        self.assertIn("max_payload: 16777216", conf)


class KubernetesTest(unittest.TestCase):
    def test_one_deployment_per_service(self):
        docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
        for name in SERVICES:
            d = deployments["toolgate-" + name]
            container = d["spec"]["template"]["spec"]["containers"][0]
            self.assertEqual(container["command"][0], "toolgate-" + name)
            self.assertEqual(container["envFrom"][0]["configMapRef"]["name"], "toolgate")


if __name__ == "__main__":
    unittest.main()
