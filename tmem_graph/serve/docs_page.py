"""The /docs page: the OpenAPI document rendered as one self-contained HTML page on the server
(no script, no stylesheet or font from elsewhere), so it reads the same offline and behind the
token (the page carries the document; the browser fetches nothing more)."""

from __future__ import annotations

from html import escape

STYLE = """body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace}h2{margin-top:2.5rem;border-bottom:1px solid #ccc}
.op{border:1px solid #ddd;border-radius:6px;padding:.2rem 1rem;margin:1rem 0}.m{font-weight:bold;text-transform:uppercase}
table{border-collapse:collapse;margin:.4rem 0}td,th{border-top:1px solid #eee;padding:.15rem .6rem;text-align:left;vertical-align:top}"""


def type_of(schema: dict) -> str:
    """A JSON Schema as a short HTML type: a link for a named model, `list of`, `map of`, `or`."""
    if "$ref" in schema:
        name = escape(schema["$ref"].rsplit("/", 1)[-1])
        return f'<a href="#{name}">{name}</a>'
    if "anyOf" in schema:
        return " or ".join(type_of(s) for s in schema["anyOf"])
    if "const" in schema or "enum" in schema:
        return " | ".join(f"<code>{escape(repr(v))}</code>" for v in schema.get("enum", [schema.get("const")]))
    kind = schema.get("type", "any")
    if kind == "array":
        return "list of " + type_of(schema.get("items", {}))
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "map of " + type_of(schema["additionalProperties"])
    return escape(str(kind))


def _content_type(content: dict | None) -> str:
    schema = (content or {}).get("application/json", {}).get("schema")
    return type_of(schema) if schema is not None else ""


def _operation(method: str, path: str, op: dict) -> str:
    rows = [f"<tr><td><code>{escape(p['name'])}</code> ({p['in']}{', required' if p.get('required') else ''})</td>"
            f"<td>{type_of(p['schema'])}</td><td>{escape(p.get('description', ''))}</td></tr>"
            for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body:
        rows.append(f"<tr><td>body</td><td>{_content_type(body['content'])}</td><td></td></tr>")
    answers = "".join(f"<tr><td>{code}</td><td>{_content_type(r.get('content'))}</td>"
                      f"<td>{escape(r['description'])}</td></tr>" for code, r in op["responses"].items())
    secured = " (no token)" if op.get("security") == [] else ""
    return (f'<div class="op"><p><span class="m">{method}</span> <code>{escape(path)}</code>{secured}: '
            f"{escape(op.get('summary', ''))}</p>"
            + (f"<table><tr><th>takes</th><th>type</th><th></th></tr>{''.join(rows)}</table>" if rows else "")
            + f"<table><tr><th>answers</th><th>body</th><th></th></tr>{answers}</table></div>")


def _schema(name: str, schema: dict) -> str:
    required = set(schema.get("required", []))
    rows = "".join(f"<tr><td><code>{escape(field)}</code>{'' if field in required else '?'}</td><td>{type_of(s)}</td>"
                   f"<td>{escape(s.get('description', ''))}</td></tr>"
                   for field, s in schema.get("properties", {}).items())
    more = " It may carry more fields." if schema.get("additionalProperties") is not False else ""
    return (f'<h3 id="{escape(name)}">{escape(name)}</h3><p>{escape(schema.get("description", ""))}{more}</p>'
            f"<table>{rows}</table>")


def render(doc: dict) -> str:
    """The page of an OpenAPI document: every operation (parameters, body, each status it answers
    and its body), then every schema."""
    info = doc["info"]
    scheme = doc.get("components", {}).get("securitySchemes", {})
    auth = ("<p>Every request but <code>/health</code> carries <code>Authorization: Bearer &lt;token&gt;</code>.</p>"
            if scheme else "")
    operations = "".join(_operation(method, path, op) for path, item in doc["paths"].items()
                         for method, op in item.items())
    schemas = "".join(_schema(name, s) for name, s in doc.get("components", {}).get("schemas", {}).items())
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{escape(info['title'])} API</title>"
            f"<style>{STYLE}</style></head><body><h1>{escape(info['title'])} {escape(info['version'])}</h1>"
            f"<p>{escape(info.get('description', ''))}</p>{auth}<p>The same as JSON: "
            f'<a href="/openapi.json">/openapi.json</a>.</p><h2>Routes</h2>{operations}'
            f"<h2>Bodies</h2>{schemas}</body></html>")
