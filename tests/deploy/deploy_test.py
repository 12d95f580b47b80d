"""compose.yaml and the Kubernetes manifests, checked by parsing (no Docker engine here).

Every service under services/ must be deployed by both, with the binary of its name, and every
environment variable they set must be one a Toolgate binary reads.
"""
import os
import pathlib
import re
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

    def test_credentials_are_secrets_each_service_its_own(self):
        services = self.doc["services"]
        for name in SERVICES:
            env = services[name]["environment"]
            self.assertEqual(env["TOOLGATE_NATS_USER"], name)
            self.assertEqual(env["TOOLGATE_NATS_PASSWORD_FILE"], "/run/secrets/nats_" + name)
            self.assertIn("nats_" + name, services[name]["secrets"])
            others = [s for s in services[name]["secrets"] if s.startswith("nats_")]
            self.assertEqual(others, ["nats_" + name])
            self.assertEqual("redis_password" in services[name]["secrets"], name == "billing")
        self.assertNotIn(":toolgate@", services["billing"]["environment"]["TOOLGATE_POSTGRES_URL"])
        self.assertNotIn("POSTGRES_PASSWORD", services["postgres"]["environment"])
        self.assertEqual(services["postgres"]["environment"]["POSTGRES_PASSWORD_FILE"],
                         "/run/secrets/postgres_password")
        self.assertIn("requirepass", " ".join(services["redis"]["command"]))
        for secret in self.doc["secrets"].values():
            self.assertTrue(secret["file"].startswith("./keys/"), secret)

    def test_nats_config_allows_large_messages(self):
        conf = (ROOT / "deploy" / "nats.conf").read_text()
        self.assertIn("max_payload: 67108864", conf)


class KubernetesTest(unittest.TestCase):
    def test_one_deployment_per_service(self):
        docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
        for name in SERVICES:
            d = deployments["toolgate-" + name]
            container = d["spec"]["template"]["spec"]["containers"][0]
            self.assertEqual(container["command"][0], "toolgate-" + name)
            self.assertEqual(container["envFrom"][0]["configMapRef"]["name"], "toolgate")
            env = {e["name"]: e["value"] for e in container["env"]}
            self.assertEqual(env["TOOLGATE_NATS_USER"], name)
            self.assertEqual(env["TOOLGATE_NATS_PASSWORD_FILE"],
                             "/credentials/nats-%s.password" % name)
            volumes = {v["name"]: v for v in d["spec"]["template"]["spec"]["volumes"]}
            secret = volumes["credentials"]["secret"]
            self.assertEqual(secret["secretName"], "toolgate-credentials")
            keys = {item["key"] for item in secret["items"]}
            self.assertIn("nats-%s.password" % name, keys)
            self.assertEqual({k for k in keys if k.startswith("nats-")}, {"nats-%s.password" % name})
            self.assertEqual("redis.password" in keys, name == "billing")

    def test_probes_and_scrapes_use_the_admin_port(self):
        docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
        # Reachable by the kubelet and the scraper on the pod network, the same port everywhere.
        self.assertEqual(config["TOOLGATE_ADMIN_ADDRESS"], "0.0.0.0")
        port = int(config["TOOLGATE_ADMIN_PORT"])
        deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
        for name in SERVICES:
            template = deployments["toolgate-" + name]["spec"]["template"]
            container = template["spec"]["containers"][0]
            self.assertEqual(container["readinessProbe"]["httpGet"], {"path": "/readyz", "port": port})
            self.assertEqual(container["livenessProbe"]["httpGet"], {"path": "/healthz", "port": port})
            self.assertIn({"name": "admin", "containerPort": port}, container["ports"])
            annotations = template["metadata"]["annotations"]
            self.assertEqual(annotations["prometheus.io/scrape"], "true")
            self.assertEqual(annotations["prometheus.io/port"], str(port))


def dockerignore_excludes(patterns, path):
    """Whether Docker's .dockerignore rules leave path (relative, "/"-separated) out of the build
    context: a pattern matches the path or a directory above it, the last matching pattern wins,
    and "!" re-includes."""
    def regex(pattern):
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out += "(.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                out += ".*"
                i += 2
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            else:
                out += re.escape(pattern[i])
                i += 1
        return re.compile(out + r"\Z")

    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw[1:] if negate else raw
        pattern = os.path.normpath(pattern.strip("/"))
        rx = regex(pattern)
        if any(rx.match(p) for p in prefixes):
            excluded = not negate
    return excluded


class DockerContextTest(unittest.TestCase):
    def setUp(self):
        lines = (ROOT / ".dockerignore").read_text().splitlines()
        self.patterns = [l.strip() for l in lines if l.strip() and not l.startswith("#")]

    def test_the_images_context_is_the_top_level(self):
        build = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["edge"]["build"]
        self.assertEqual(build["context"], ".")
        self.assertEqual(build["dockerfile"], "deploy/Dockerfile")

    def test_build_outputs_and_local_data_stay_out(self):
        for path in ("build/bin/toolgate-edge", "build", "build-asan/CMakeCache.txt",
                     "data/keys/master.key", "data/pg/PG_VERSION", ".git/HEAD",
                     "web/node_modules/x/index.js", "node_modules/y"):
            self.assertTrue(dockerignore_excludes(self.patterns, path), path)

    def test_the_sources_go_in(self):
        for path in ("CMakeLists.txt", "scripts/install-deps.sh", "scripts/build.sh",
                     "services/edge/main.cc", "libs/metrics/src/metrics.cc", "web/app/index.html",
                     "deploy/Dockerfile", "proto/toolgate/v1/toolgate.proto"):
            self.assertTrue((ROOT / path).exists(), path)
            self.assertFalse(dockerignore_excludes(self.patterns, path), path)


if __name__ == "__main__":
    unittest.main()
