#!/usr/bin/env python3
"""Keeps the written docs true to the product:

- docs/api.md names every route of services/edge/openapi.json (as `METHOD /path`), and names no
  route that the description lacks;
- docs/api.md lists every error code of the problem catalogue (libs/core/src/problem.cc) on a
  line with its HTTP status;
- README.md and docs/*.md point at nothing outside the repository and speak of the product, not
  of how it was made;
- the /docs page renders api.md's tables and routes;
- docs/cli.md documents every command of the CLI's command table (cli/toolgate/commands.cc).
"""
import json
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "docs", "render"))
import render_markdown  # noqa: E402

METHODS = ("get", "post", "put", "patch", "delete")


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def openapi_routes():
    """The description's routes as docs/api.md names them: the management API without its
    /api/v1 prefix (api.md's base path), MCP, /healthz and openapi.json itself as they are."""
    spec = json.loads(read("services", "edge", "openapi.json"))
    routes = set()
    for path, ops in spec["paths"].items():
        if path.startswith("/api/v1/") and path != "/api/v1/openapi.json":
            path = path[len("/api/v1"):]
        routes |= {(m.upper(), path) for m in ops if m in METHODS}
    return routes


def documented_routes(text):
    return set(re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`\s]*)`", text))


def catalogue():
    source = read("libs", "core", "src", "problem.cc")
    return dict(re.findall(r'\{"([a-z_]+)", \{(\d{3}), "', source))


class ApiReference(unittest.TestCase):
    def setUp(self):
        self.api = read("docs", "api.md")

    def test_every_route_of_the_openapi_description_is_documented(self):
        missing = sorted(openapi_routes() - documented_routes(self.api))
        self.assertEqual(missing, [], "routes of openapi.json missing from docs/api.md")

    def test_no_documented_route_is_unknown_to_the_openapi_description(self):
        # The web app's pages are not part of the API description.
        own = {("GET", "/docs"), ("GET", "/")}
        unknown = sorted(documented_routes(self.api) - openapi_routes() - own)
        self.assertEqual(unknown, [], "docs/api.md documents routes openapi.json lacks")

    def test_every_error_code_is_documented_with_its_status(self):
        codes = catalogue()
        self.assertGreater(len(codes), 30, "the catalogue was not read")
        lines = self.api.splitlines()
        for code, status in sorted(codes.items()):
            rows = [l for l in lines if "`%s`" % code in l and re.search(r"\b%s\b" % status, l)]
            self.assertTrue(rows, "docs/api.md lacks `%s` with status %s" % (code, status))

    def test_the_page_renders_tables_and_routes(self):
        page = render_markdown.render(self.api)
        self.assertIn("<table>", page)
        self.assertIn("<code>POST /functions/{function_id}/invoke</code>", page)
        self.assertNotIn("<script", page)
        self.assertNotIn("style=", page)
        # HTML in the source is shown, never interpreted.
        self.assertIn("&lt;b&gt;", render_markdown.render("a <b>b</b>"))


class ApiDescription(unittest.TestCase):
    """The shape of openapi.json that generators rely on; tests/openapi/check_responses.mjs
    validates the document and every recorded answer against it."""

    def setUp(self):
        self.spec = json.loads(read("services", "edge", "openapi.json"))

    def operations(self):
        for path, ops in self.spec["paths"].items():
            for method, op in ops.items():
                if method in METHODS:
                    yield "%s %s" % (method.upper(), path), method, op

    def test_one_server_at_the_root_and_absolute_paths(self):
        self.assertEqual([s["url"] for s in self.spec["servers"]], ["/"])
        for path, item in self.spec["paths"].items():
            self.assertNotIn("servers", item, path)
            self.assertTrue(path.startswith(("/api/v1/", "/mcp", "/healthz", "/oauth/", "/.well-known/")), path)

    def test_no_operation_answers_only_default(self):
        for name, _, op in self.operations():
            statuses = [s for s in op["responses"] if s != "default"]
            self.assertTrue(statuses, name)
            self.assertTrue([s for s in statuses if s[0] in "23"], name + " declares no success")

    def test_every_change_with_a_body_declares_it(self):
        # Operations that take no body; every other POST, PUT and PATCH declares its schema.
        bodiless = {"POST /api/v1/auth/logout", "PUT /api/v1/favorites/{function_id}"}
        for name, method, op in self.operations():
            if method in ("post", "put", "patch") and name not in bodiless:
                self.assertIn("requestBody", op, name)
                for media in op["requestBody"]["content"].values():
                    self.assertIn("schema", media, name)
            if name in bodiless:
                self.assertNotIn("requestBody", op, name)

    def test_every_body_has_an_example(self):
        schemas = self.spec["components"]["schemas"]

        def has_example(media):
            schema = media.get("schema", {})
            if "$ref" in schema:
                schema = schemas[schema["$ref"].rsplit("/", 1)[1]]
            return "example" in media or "example" in schema

        for name, _, op in self.operations():
            for type_, media in op.get("requestBody", {}).get("content", {}).items():
                if type_ == "application/json":
                    self.assertTrue(has_example(media), name + " request")
            for status, response in op["responses"].items():
                if status[0] == "2" and "$ref" not in response:
                    for media in response.get("content", {}).values():
                        self.assertTrue(has_example(media), "%s %s" % (name, status))

    def test_every_error_is_a_problem_and_refusals_say_when_to_retry(self):
        responses = self.spec["components"]["responses"]
        for name, _, op in self.operations():
            for status, response in op["responses"].items():
                if "$ref" in response:
                    response = responses[response["$ref"].rsplit("/", 1)[1]]
                if status[0] in "45" and status[1:] != "XX":
                    self.assertIn("application/problem+json", response.get("content", {}),
                                  "%s %s" % (name, status))
                if status in ("429", "503"):
                    self.assertIn("Retry-After", response.get("headers", {}),
                                  "%s %s" % (name, status))


class DocsStandAlone(unittest.TestCase):
    def docs(self):
        names = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        names += [os.path.join("docs", n) for n in sorted(os.listdir(os.path.join(ROOT, "docs")))
                  if n.endswith(".md")]
        return {n: read(n) for n in names if os.path.exists(os.path.join(ROOT, n))}

    def assertNoMatch(self, pattern):
        found = []
        for name, text in self.docs().items():
            for m in re.finditer(pattern, text):
                line = text.count("\n", 0, m.start()) + 1
                found.append("%s:%d: %s" % (name, line, m.group(0)))
        self.assertEqual(found, [])

    def test_nothing_points_outside_the_repository(self):
        self.assertNoMatch(r"\.\./shared|shared/spec|shared/design")

    def test_docs_describe_the_product_not_its_history(self):
        self.assertNoMatch(r"(?i)\bissues?\b|\bsessions? \d+|session history|\bthe owner\b")


class CliReference(unittest.TestCase):
    def test_every_command_of_the_table_is_documented(self):
        commands = re.findall(r'\.name = "([a-z -]+)"', read("cli", "toolgate", "commands.cc"))
        self.assertGreater(len(commands), 20)
        doc = read("docs", "cli.md")
        missing = [c for c in commands
                   if not re.search(r"^### `toolgate " + re.escape(c) + r"[ `]", doc, re.M)]
        self.assertEqual(missing, [], "commands missing from docs/cli.md")


if __name__ == "__main__":
    unittest.main()
