"""compose.yaml and the Kubernetes manifests, checked by parsing (no Docker engine here).

Every service under services/ must be deployed by both, with the binary of its name, and every
environment variable they set must be one a Toolgate binary reads.
"""
import ipaddress
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


class ComposeHealthTest(unittest.TestCase):
    def setUp(self):
        self.doc = yaml.safe_load((ROOT / "compose.yaml").read_text())
        self.services = self.doc["services"]

    def test_healthchecks_ask_each_services_admin_port_for_readiness(self):
        for name in SERVICES:
            service = self.services[name]
            port = service["environment"]["TOOLGATE_ADMIN_PORT"]
            self.assertEqual(service["environment"]["TOOLGATE_ADMIN_ADDRESS"], "0.0.0.0")
            test = service["healthcheck"]["test"]
            self.assertEqual(test[0], "CMD", name)
            self.assertIn("http://127.0.0.1:%s/readyz" % port, test, name)

    def test_services_start_once_what_they_need_is_healthy(self):
        for name, service in self.services.items():
            for dependency, condition in service.get("depends_on", {}).items():
                self.assertEqual(condition, {"condition": "service_healthy"}, (name, dependency))
                self.assertIn("healthcheck", self.services[dependency], dependency)
        for name in SERVICES:
            self.assertIn("nats", self.services[name]["depends_on"], name)
        self.assertIn("postgres", self.services["billing"]["depends_on"])
        self.assertIn("redis", self.services["billing"]["depends_on"])
        # The edge opens to callers once the whole chain is ready.
        self.assertEqual(set(self.services["edge"]["depends_on"]), set(SERVICES) - {"edge"} | {"nats"})

    def test_only_the_executor_gets_capabilities(self):
        for name in SERVICES:
            service = self.services[name]
            self.assertEqual(service["cap_drop"], ["ALL"], name)
            self.assertIn("no-new-privileges:true", service["security_opt"], name)
            self.assertNotIn("privileged", service, name)
            if name == "executor":
                self.assertEqual(set(service["cap_add"]), {"SETUID", "SETGID", "DAC_OVERRIDE", "SYS_ADMIN"})
            else:
                self.assertNotIn("cap_add", service, name)
                self.assertNotIn("user", service, name)

    def test_images_are_versioned(self):
        for name in SERVICES:
            image = self.services[name]["image"]
            self.assertNotRegex(image, r":latest$|^[^:]*$", name)
        for name, service in self.services.items():
            self.assertNotRegex(service.get("image", "x:1"), r":latest$|^[^:]*$", name)

    def test_the_observability_profile_runs_prometheus_with_the_rules_and_grafana_with_the_dashboard(self):
        prometheus, grafana = self.services["prometheus"], self.services["grafana"]
        self.assertEqual(prometheus["profiles"], ["observability"])
        self.assertEqual(grafana["profiles"], ["observability"])
        for name in SERVICES:
            self.assertNotIn("profiles", self.services[name])
        mounts = {m.split(":")[1]: m.split(":")[0] for m in prometheus["volumes"] if m.startswith("./")}
        config_dir = ROOT / mounts["/etc/prometheus"]
        config = yaml.safe_load((config_dir / "prometheus.yml").read_text())
        for rule_file in config["rule_files"]:
            self.assertTrue((config_dir / rule_file.split()[0]).exists(), rule_file)
        # The scrape finds every service on its admin port and labels it as the dashboard expects.
        job = config["scrape_configs"][0]
        self.assertEqual(job["job_name"], "toolgate")
        self.assertEqual(sorted(job["dns_sd_configs"][0]["names"]), SERVICES)
        self.assertEqual(str(job["dns_sd_configs"][0]["port"]),
                         self.services["edge"]["environment"]["TOOLGATE_ADMIN_PORT"])
        self.assertEqual(job["relabel_configs"][0]["target_label"], "service")
        gmounts = {m.split(":")[1]: ROOT / m.split(":")[0] for m in grafana["volumes"] if m.startswith("./")}
        provider = yaml.safe_load(
            (gmounts["/etc/grafana/provisioning"] / "dashboards" / "toolgate.yml").read_text())
        path = provider["providers"][0]["options"]["path"]
        self.assertTrue((gmounts[path] / "toolgate.json").exists())


class ObservabilityFilesTest(unittest.TestCase):
    """The dashboard and the rules name only metrics that some service exports."""

    def test_the_kubernetes_scrape_labels_as_the_dashboard_expects(self):
        directory = ROOT / "deploy/observability/prometheus"
        config = yaml.safe_load((directory / "kubernetes.yml").read_text())
        self.assertTrue((directory / config["rule_files"][0]).exists())
        job = config["scrape_configs"][0]
        self.assertEqual(job["job_name"], "toolgate")
        targets = {r.get("target_label") for r in job["relabel_configs"]}
        self.assertIn("service", targets)
        # The pods' app labels are what the rule finds: toolgate-<service>.
        docs = list(yaml.safe_load_all((ROOT / "deploy/k8s/toolgate.yaml").read_text()))
        apps = {d["spec"]["template"]["metadata"]["labels"]["app"] for d in docs
                if d["kind"] == "Deployment"}
        rule = next(r for r in job["relabel_configs"] if r.get("target_label") == "service")
        self.assertEqual({re.fullmatch(rule["regex"], a).group(1) for a in apps}, set(SERVICES))

    def exported(self):
        names = set()
        for base in ("libs", "services"):
            for path in (ROOT / base).rglob("*.cc"):
                if not path.name.endswith("_test.cc"):
                    names.update(re.findall(r'"(toolgate_[a-z0-9_]+)"', path.read_text()))
        return names

    def test_every_metric_named_is_exported(self):
        exported = self.exported() | {"up"}
        texts = [(ROOT / "deploy/observability/grafana/dashboards/toolgate.json").read_text(),
                 (ROOT / "deploy/observability/prometheus/alerts.yml").read_text()]
        named = set()
        for text in texts:
            named.update(re.findall(r"\b(toolgate_[a-z0-9_]+)", text))
        self.assertGreater(len(named), 20)
        for name in sorted(named):
            base = re.sub(r"_(bucket|count|sum)$", "", name)
            self.assertTrue(name in exported or base in exported, name)


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


class KubernetesOperabilityTest(unittest.TestCase):
    def setUp(self):
        self.docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        self.deployments = {d["metadata"]["name"]: d for d in self.docs if d["kind"] == "Deployment"}

    def containers(self):
        for name, d in self.deployments.items():
            for c in d["spec"]["template"]["spec"]["containers"]:
                yield name, d, c

    def test_every_service_has_a_deployment(self):
        self.assertEqual(set(self.deployments), {"toolgate-" + n for n in SERVICES})

    def test_every_deployment_has_probes_resources_and_a_versioned_image(self):
        for name, _, c in self.containers():
            self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz", name)
            self.assertEqual(c["livenessProbe"]["httpGet"]["path"], "/healthz", name)
            # Longer than the readiness check's own deadline on a store (one second).
            self.assertGreaterEqual(c["readinessProbe"].get("timeoutSeconds", 1), 2, name)
            for kind in ("requests", "limits"):
                self.assertIn("cpu", c["resources"][kind], name)
                self.assertIn("memory", c["resources"][kind], name)
            self.assertRegex(c["image"], r"^[^:]+:[^:]+$", name)
            self.assertFalse(c["image"].endswith(":latest"), name)

    def test_edge_and_executor_have_a_disruption_budget_and_an_autoscaler(self):
        for kind in ("PodDisruptionBudget", "HorizontalPodAutoscaler"):
            objects = {d["metadata"]["name"]: d for d in self.docs if d["kind"] == kind}
            for name in ("toolgate-edge", "toolgate-executor"):
                self.assertIn(name, objects, kind)
                spec = objects[name]["spec"]
                if kind == "PodDisruptionBudget":
                    labels = self.deployments[name]["spec"]["template"]["metadata"]["labels"]
                    self.assertEqual(spec["selector"]["matchLabels"], labels)
                    self.assertGreaterEqual(spec["minAvailable"], 1)
                else:
                    self.assertEqual(spec["scaleTargetRef"]["name"], name)
                    self.assertGreaterEqual(spec["maxReplicas"], spec["minReplicas"])
                    # CPU utilisation needs CPU requests to be relative to.
                    self.assertEqual(spec["metrics"][0]["resource"]["name"], "cpu")

    def test_postgres_credentials_come_from_a_secret_and_configuration_from_the_configmap(self):
        config = next(d for d in self.docs if d["kind"] == "ConfigMap")["data"]
        self.assertNotRegex(config["TOOLGATE_POSTGRES_URL"], r"://[^/@]*:[^/@]*@")
        path = config["TOOLGATE_POSTGRES_PASSWORD_FILE"]
        for service in ("auth", "registry", "secrets", "billing"):
            spec = self.deployments["toolgate-" + service]["spec"]["template"]["spec"]
            container = spec["containers"][0]
            self.assertEqual(container["envFrom"], [{"configMapRef": {"name": "toolgate"}}])
            mount = next(m for m in container["volumeMounts"] if path.startswith(m["mountPath"] + "/"))
            volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
            items = {i["path"]: i["key"] for i in volume["secret"]["items"]}
            self.assertEqual(items[path[len(mount["mountPath"]) + 1:]], "postgres.password")

    def test_only_the_executor_has_privileges_and_they_are_listed(self):
        for name, d, c in self.containers():
            pod = d["spec"]["template"]["spec"].get("securityContext", {})
            sc = c.get("securityContext", {})
            self.assertFalse(sc.get("privileged", False), name)
            self.assertIs(sc.get("allowPrivilegeEscalation"), False, name)
            self.assertEqual(sc["capabilities"]["drop"], ["ALL"], name)
            if name == "toolgate-executor":
                self.assertEqual(sc["runAsUser"], 0)
                self.assertEqual(set(sc["capabilities"]["add"]), {"SETUID", "SETGID", "DAC_OVERRIDE", "SYS_ADMIN"})
                continue
            self.assertNotIn("add", sc["capabilities"], name)
            self.assertTrue(pod["runAsNonRoot"], name)
            self.assertEqual(pod["seccompProfile"], {"type": "RuntimeDefault"}, name)
            self.assertTrue(sc["readOnlyRootFilesystem"], name)


PROJECT_VERSION = re.search(r"project\(toolgate VERSION (\S+)",
                            (ROOT / "CMakeLists.txt").read_text()).group(1)
# The registry part of every manifest image, replaced by the operator (docs/operations.md).
REGISTRY_PLACEHOLDER = "REGISTRY"


class KubernetesLifecycleTest(unittest.TestCase):
    """Startup probes, autoscalers owning replica counts, and the image reference."""

    def setUp(self):
        self.docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        self.deployments = {d["metadata"]["name"]: d for d in self.docs if d["kind"] == "Deployment"}
        config = next(d for d in self.docs if d["kind"] == "ConfigMap")["data"]
        self.admin_port = int(config["TOOLGATE_ADMIN_PORT"])

    def test_every_deployment_has_a_startup_probe_on_the_admin_port(self):
        for name, d in self.deployments.items():
            for c in d["spec"]["template"]["spec"]["containers"]:
                self.assertIn("startupProbe", c, name)
                probe = c["startupProbe"]
                self.assertEqual(probe["httpGet"], {"path": "/healthz", "port": self.admin_port}, name)
                # Long enough for a service to open its admin port (the executor prepares its
                # cgroups and bundle cache first), and it ends: a service that never comes up
                # is restarted.
                window = probe.get("periodSeconds", 10) * probe.get("failureThreshold", 3)
                self.assertGreaterEqual(window, 60, name)
                self.assertLessEqual(window, 600, name)
                # The startup probe is what delays liveness; no fixed delay on top.
                self.assertNotIn("initialDelaySeconds", c["livenessProbe"], name)

    def test_an_autoscaled_deployment_leaves_its_replica_count_to_the_autoscaler(self):
        targets = {d["spec"]["scaleTargetRef"]["name"] for d in self.docs
                   if d["kind"] == "HorizontalPodAutoscaler"}
        self.assertEqual(targets, {"toolgate-edge", "toolgate-executor"})
        for name, d in self.deployments.items():
            if name in targets:
                # kubectl apply would reset the autoscaler's count to a fixed one on every apply.
                self.assertNotIn("replicas", d["spec"], name)
            else:
                self.assertGreaterEqual(d["spec"]["replicas"], 2, name)

    def test_images_name_the_registry_placeholder_and_the_release(self):
        for name, d in self.deployments.items():
            for c in d["spec"]["template"]["spec"]["containers"]:
                self.assertEqual(c["image"], "%s/toolgate:%s" % (REGISTRY_PLACEHOLDER, PROJECT_VERSION),
                                 name)
        # compose builds the same release locally.
        compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
        self.assertEqual(compose["services"]["edge"]["image"],
                         "toolgate:${TOOLGATE_VERSION:-%s}" % PROJECT_VERSION)
        # The operations guide says how to build, push and substitute it.
        operations = (ROOT / "docs" / "operations.md").read_text()
        for text in ("%s/toolgate" % REGISTRY_PLACEHOLDER, "docker push",
                     "newName:",  # the kustomize way
                     "sed "):  # and the plain one
            self.assertTrue(text in operations, "docs/operations.md does not say " + text)


ALL = "any port"
MONITORING = {"kubernetes.io/metadata.name": "monitoring"}
NAMESPACE = {"kubernetes.io/metadata.name": "toolgate"}
KUBE_DNS = ({"kubernetes.io/metadata.name": "kube-system"}, {"k8s-app": "kube-dns"})


def selects(selector, labels):
    """Whether a Kubernetes label selector matches labels."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for e in selector.get("matchExpressions", []):
        op, key = e["operator"], e["key"]
        if op == "In" and labels.get(key) not in e["values"]:
            return False
        if op == "NotIn" and labels.get(key) in e["values"]:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def peer_matches(peer, endpoint):
    """Whether a NetworkPolicy peer (from/to entry) covers an endpoint: ("pod", namespace labels,
    pod labels) or ("ip", address). The policies live in the Toolgate namespace."""
    if "ipBlock" in peer:
        if endpoint[0] != "ip":
            return False
        address = ipaddress.ip_address(endpoint[1])
        block = peer["ipBlock"]
        network = ipaddress.ip_network(block["cidr"])
        if address.version != network.version or address not in network:
            return False
        return not any(address in ipaddress.ip_network(e) for e in block.get("except", [])
                       if ipaddress.ip_network(e).version == address.version)
    if endpoint[0] != "pod":
        return False
    _, namespace, labels = endpoint
    if "namespaceSelector" in peer:
        if not selects(peer["namespaceSelector"], namespace):
            return False
    elif namespace != NAMESPACE:
        return False
    return selects(peer.get("podSelector", {}), labels)


def allowed_ports(docs, direction, pod_labels, peer):
    """The ports the policies let the pod (in the Toolgate namespace) exchange with peer in
    direction ("ingress": peer connects to the pod; "egress": the pod connects to peer): a set of
    (protocol, port), ALL, or None when no policy isolates the pod in that direction."""
    policies = [d["spec"] for d in docs if d["kind"] == "NetworkPolicy"
                and selects(d["spec"]["podSelector"], pod_labels)]
    kind = direction.capitalize()
    policies = [p for p in policies if kind in p.get("policyTypes", ["Ingress"])]
    if not policies:
        return None
    ports = set()
    for policy in policies:
        for rule in policy.get(direction, []) or []:
            peers = rule.get("from" if direction == "ingress" else "to")
            if peers and not any(peer_matches(p, peer) for p in peers):
                continue
            if not rule.get("ports"):
                return ALL
            ports.update((p.get("protocol", "TCP"), p["port"]) for p in rule["ports"])
    return ports


class NetworkPolicyTest(unittest.TestCase):
    """What each pod may reach and be reached by, evaluated from the manifest's NetworkPolicies
    the way Kubernetes does (a pod selected by a policy of a direction is isolated in it; the
    rules of every such policy add up)."""

    OUTSIDE = [("ip", "203.0.113.7"), ("ip", "8.8.8.8"), ("ip", "2001:4860:4860::8888")]
    PRIVATE = [("ip", "10.1.2.3"), ("ip", "172.16.0.9"), ("ip", "192.168.1.1"),
               ("ip", "169.254.169.254"), ("ip", "100.64.0.1"), ("ip", "fd00::1")]

    def setUp(self):
        self.docs = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolgate.yaml").read_text()))
        self.pods = {d["metadata"]["name"].split("-", 1)[1]: d["spec"]["template"]["metadata"]["labels"]
                     for d in self.docs if d["kind"] == "Deployment"}
        self.assertEqual(set(self.pods), set(SERVICES))

    def ports(self, direction, service, peer):
        labels = self.pods[service] if service in self.pods else {"app": service}
        return allowed_ports(self.docs, direction, labels, peer)

    def test_the_namespace_denies_by_default(self):
        deny = [d for d in self.docs if d["kind"] == "NetworkPolicy" and d["spec"]["podSelector"] == {}
                and set(d["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
                and not d["spec"].get("ingress") and not d["spec"].get("egress")]
        self.assertEqual(len(deny), 1)
        # Any pod of the namespace, Toolgate's or not, is isolated both ways.
        for labels in list(self.pods.values()) + [{"app": "anything"}, {}]:
            self.assertIsNotNone(allowed_ports(self.docs, "ingress", labels, self.OUTSIDE[0]))
            self.assertIsNotNone(allowed_ports(self.docs, "egress", labels, self.OUTSIDE[0]))

    def test_only_the_edges_http_port_is_reachable_from_outside(self):
        edge_port = next(p["containerPort"] for c in self.deployment("toolgate-edge")
                         for p in c["ports"] if p.get("name") != "admin")
        for service in SERVICES:
            for peer in self.OUTSIDE + self.PRIVATE + [("pod", {"kubernetes.io/metadata.name": "other"}, {})]:
                expected = {("TCP", edge_port)} if service == "edge" else set()
                self.assertEqual(self.ports("ingress", service, peer), expected, (service, peer))

    def test_services_reach_each_other_only_through_nats(self):
        for service in SERVICES:
            for other in SERVICES:
                to = ("pod", NAMESPACE, self.pods[other])
                self.assertEqual(self.ports("egress", service, to), set(), (service, other))
        nats = ("pod", NAMESPACE, {"app": "nats"})
        for service in SERVICES:
            self.assertEqual(self.ports("egress", service, nats), {("TCP", 4222)}, service)
            peer = ("pod", NAMESPACE, self.pods[service])
            self.assertEqual(self.ports("ingress", "nats", peer), {("TCP", 4222)}, service)
        # The NATS servers form their cluster among themselves.
        self.assertEqual(self.ports("egress", "nats", nats), {("TCP", 6222)})
        self.assertEqual(self.ports("ingress", "nats", nats), {("TCP", 6222)})

    def test_the_stores_are_reached_only_by_the_services_that_use_them(self):
        users = {"postgres": ({"auth", "registry", "secrets", "billing"}, 5432),
                 "redis": ({"billing"}, 6379)}
        for store, (services, port) in users.items():
            for service in SERVICES:
                expected = {("TCP", port)} if service in services else set()
                to = ("pod", NAMESPACE, {"app": store})
                self.assertEqual(self.ports("egress", service, to), expected, (service, store))
                peer = ("pod", NAMESPACE, self.pods[service])
                self.assertEqual(self.ports("ingress", store, peer), expected, (service, store))
            # Nothing reaches a store from outside the namespace.
            for peer in self.OUTSIDE:
                self.assertEqual(self.ports("ingress", store, peer), set(), store)

    def test_monitoring_scrapes_the_admin_ports_and_receives_spans(self):
        prometheus = ("pod", MONITORING, {"app": "prometheus"})
        collector = ("pod", MONITORING, {"app": "otel-collector"})
        config = next(d for d in self.docs if d["kind"] == "ConfigMap")["data"]
        admin = int(config["TOOLGATE_ADMIN_PORT"])
        for service in SERVICES:
            ports = self.ports("ingress", service, prometheus)
            extra = {("TCP", 8080)} if service == "edge" else set()
            self.assertEqual(ports, {("TCP", admin)} | extra, service)
            self.assertEqual(self.ports("egress", service, collector) - {ALL}, {("TCP", 4318)}, service)

    def test_only_the_executor_reaches_the_internet_and_never_private_networks(self):
        for service in SERVICES:
            for peer in self.OUTSIDE:
                expected = ALL if service == "executor" else set()
                self.assertEqual(self.ports("egress", service, peer), expected, (service, peer))
            for peer in self.PRIVATE:
                self.assertEqual(self.ports("egress", service, peer), set(), (service, peer))

    def test_every_pod_resolves_names_through_the_cluster_dns(self):
        dns = ("pod",) + KUBE_DNS
        for service in SERVICES + ["nats", "redis", "postgres"]:
            self.assertEqual(self.ports("egress", service, dns), {("UDP", 53), ("TCP", 53)}, service)

    def deployment(self, name):
        d = next(d for d in self.docs if d["kind"] == "Deployment" and d["metadata"]["name"] == name)
        return d["spec"]["template"]["spec"]["containers"]


class ImageTest(unittest.TestCase):
    def test_the_image_carries_the_web_app_and_the_edge_serves_it(self):
        dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
        copy = re.search(r"^COPY --from=build /src/build/web (\S+)$", dockerfile, re.M)
        self.assertIsNotNone(copy, "the web app is not copied into the image")
        self.assertRegex(dockerfile, r"(?m)^ENV TOOLGATE_WEB_DIR=%s$" % re.escape(copy.group(1)))
        # What compose's health checks run is installed.
        self.assertRegex(dockerfile, r"install -y[^&]*\bcurl\b")


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
