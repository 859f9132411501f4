#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in of OpenAI's "Sign in with ChatGPT" for open-source apps (an OAuth 2.0 and OpenID
Connect issuer), written from OpenAI's guide for them, and of the Responses API a plan is used
through, for sion's suites (Python standard library only).

The issuer, at this server's URL (its "iss"), CHECKS what it is sent:
  GET /.well-known/openid-configuration  the discovery document: issuer, authorization_endpoint,
      token_endpoint, jwks_uri, revocation_endpoint.
  GET /api/accounts/authorize  response_type code; a loopback redirect_uri on /auth/callback (any
      port, RFC 8252); scope exactly "openid profile email offline_access resource.invoke
      chatgpt.tokens.use.direct"; resource https://api.openai.com/v1; an S256 code_challenge,
      state and nonce; ext_agent_host_id a urn:uuid. A first registration is client_id
      dynamic_agent_client with agent_name_hint "Siontology": a client "oaiapp_stand_in_N" is
      issued for the host and comes back in the redirect; a later sign-in is by the client issued
      to that host, without agent_name_hint. It redirects (302) to the redirect URI with the code,
      the state, the client_id (first registrations) and the scopes granted (or
      error=access_denied with --deny).
  POST /api/accounts/oauth/token  a form: authorization_code (the code once, by the issued client,
      the same redirect URI, the verifier whose S256 is the challenge, the resource) or
      refresh_token (only the newest refresh token: each renewal gives a new one and the old is
      refused with invalid_grant; the client and the resource). Tokens "at-N" and "rt-N"; access
      tokens live --expires-in seconds; the scopes granted; an ID token signed RS256 with a key
      made at start (kid "stand-in-1").
  POST /api/accounts/oauth/revoke  a form: token, token_type_hint refresh_token, client_id; the
      token is refused from then on.
  GET /.well-known/jwks.json  that key.
--id-token spoils the ID token, to test sion's checks: bad-signature, wrong-iss, wrong-aud,
wrong-nonce, expired, unknown-kid; --no-plan grants every scope but chatgpt.tokens.use.direct.

The API (/v1): POST /responses is responses_server.py's (no max_output_tokens; the tools in an
additional_tools input item, as the guide's preview limitations have it), with a live access
token of this issuer as a bearer token and, as Codex CLI sends it, ChatGPT-Account-Id
"acct-stand-in"; --refuse-token N refuses the first N requests with 401 whatever their token (as a
token revoked early). GET /models lists the plan's models (one not to be listed; none to be listed
with --hide-models). The issuer's log
entries are {"endpoint", "verdict"}. --key-file keeps the key between stand-ins.
"""
import base64
import hashlib
import json
import os
import random
import re
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import responses_server  # noqa: E402
import standin  # noqa: E402

ACCOUNT = "acct-stand-in"
RESOURCE = "https://api.openai.com/v1"
PLAN = "chatgpt.tokens.use.direct"
SCOPES = "openid profile email offline_access resource.invoke " + PLAN
HOST_ID = re.compile(r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
SMALL_PRIMES = [p for p in range(3, 2000) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def probably_prime(n, rng):
    if any(n % p == 0 for p in SMALL_PRIMES):
        return n in SMALL_PRIMES
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for _ in range(24):
        x = pow(rng.randrange(2, n - 2), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def rsa_key(bits=2048):
    rng = random.SystemRandom()
    e = 65537
    while True:
        primes = []
        while len(primes) < 2:
            c = rng.getrandbits(bits // 2) | (3 << (bits // 2 - 2)) | 1
            if probably_prime(c, rng) and (c - 1) % e:
                primes.append(c)
        n = primes[0] * primes[1]
        if n.bit_length() == bits and primes[0] != primes[1]:
            return n, e, pow(e, -1, (primes[0] - 1) * (primes[1] - 1))


def kept_key(path):
    """The key kept at `path` (made there when it is missing), so suites start issuers quickly."""
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return tuple(json.load(f))
    key = rsa_key()
    if path:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(key, f)
        os.rename(path + ".tmp", path)
    return key


def rs256(n, d, data):
    size = (n.bit_length() + 7) // 8
    digest = SHA256_INFO + hashlib.sha256(data).digest()
    em = b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest
    return pow(int.from_bytes(em, "big"), d, n).to_bytes(size, "big")


def loopback_callback(uri):
    u = urllib.parse.urlsplit(uri or "")
    return u.scheme == "http" and u.hostname == "127.0.0.1" and u.port and u.path == "/auth/callback"


class Chatgpt(responses_server.Responses):
    @staticmethod
    def add_arguments(parser):
        responses_server.Responses.add_arguments(parser)
        parser.add_argument("--id-token", default="good")
        parser.add_argument("--deny", action="store_true")
        parser.add_argument("--no-plan", action="store_true")
        parser.add_argument("--hide-models", action="store_true", help="no model of the plan is to list")
        parser.add_argument("--expires-in", type=int, default=3600)
        parser.add_argument("--refuse-token", type=int, default=0)
        parser.add_argument("--key-file", help="the RSA key, made and kept there when missing")

    def __init__(self, args):
        args.path = "/v1/responses"
        args.room = False
        args.tools_in_input = True
        super().__init__(args)
        self.n, self.e, self.d = kept_key(args.key_file)
        self.clients = {}  # issued client id -> the host it was issued for
        self.codes = {}  # code -> the authorize request's parameters
        self.access = set()
        self.refresh = None  # the one refresh token that may be used
        self.issued = 0
        self.refused_tokens = 0

    def granted(self):
        return " ".join(w for w in SCOPES.split() if not (self.args.no_plan and w == PLAN))

    # --- the issuer -----------------------------------------------------------------------------
    def verdict(self, handler, verdict, status, obj, headers=None):
        self.note({"endpoint": handler.path.split("?")[0], "verdict": verdict})
        self.send_json(handler, status, obj, headers)

    def handle_get(self, handler):
        path, _, query = handler.path.partition("?")
        if path == "/.well-known/openid-configuration":
            return self.send_json(handler, 200, {
                "issuer": self.url, "authorization_endpoint": self.url + "/api/accounts/authorize",
                "token_endpoint": self.url + "/api/accounts/oauth/token",
                "revocation_endpoint": self.url + "/api/accounts/oauth/revoke",
                "jwks_uri": self.url + "/.well-known/jwks.json",
                "code_challenge_methods_supported": ["S256"]})
        if path == "/.well-known/jwks.json":
            key = {"kty": "RSA", "kid": "stand-in-1", "alg": "RS256", "use": "sig",
                   "n": b64url(self.n.to_bytes((self.n.bit_length() + 7) // 8, "big")),
                   "e": b64url(self.e.to_bytes(3, "big"))}
            return self.send_json(handler, 200, {"keys": [key]})
        if path == "/api/accounts/authorize":
            return self.authorize(handler, urllib.parse.parse_qs(query))
        if path == "/v1/models":
            if not self.token_ok(handler):
                return None
            shown = "hide" if self.args.hide_models else "list"
            return self.send_json(handler, 200, {"models": [
                {"slug": "gpt-5.2-codex", "display_name": "GPT-5.2 Codex", "visibility": shown},
                {"slug": "gpt-5.2-internal", "display_name": "Internal", "visibility": "hide"},
                {"slug": "gpt-5.2", "display_name": "GPT-5.2", "visibility": shown}]})
        return self.send_json(handler, 404, {"error": "not_found"})

    def authorize(self, handler, query):
        wrong = [k for k, v in query.items() if len(v) != 1]
        q = {k: v[0] for k, v in query.items()}
        client, host = q.get("client_id"), q.get("ext_agent_host_id", "")
        if not HOST_ID.fullmatch(host):
            wrong.append("ext_agent_host_id")
        if client == "dynamic_agent_client":
            if q.get("agent_name_hint") != "Siontology":
                wrong.append("agent_name_hint")
        elif self.clients.get(client) != host or "agent_name_hint" in q:
            wrong.append("client_id")
        if q.get("response_type") != "code":
            wrong.append("response_type")
        if not loopback_callback(q.get("redirect_uri")):
            wrong.append("redirect_uri")
        if q.get("scope") != SCOPES:
            wrong.append("scope")
        if q.get("resource") != RESOURCE:
            wrong.append("resource")
        if q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43:
            wrong.append("code_challenge")
        if not q.get("state") or not q.get("nonce"):
            wrong.append("state or nonce")
        if wrong:
            return self.verdict(handler, "authorize refused: " + ", ".join(wrong), 400,
                                {"error": "invalid_request", "error_description": ", ".join(wrong)})
        back = {"state": q["state"]}
        verdict = "redirected"
        if self.args.deny:
            back["error"] = "access_denied"
        else:
            if client == "dynamic_agent_client":
                with self.lock:
                    client = "oaiapp_stand_in_%d" % (len(self.clients) + 1)
                    self.clients[client] = host
                back["client_id"] = client
                verdict = "registered " + client
            code = "code-%d" % random.SystemRandom().getrandbits(64)
            with self.lock:
                self.codes[code] = dict(q, client_id=client)
            back["code"] = code
            back["scope"] = self.granted()
        location = q["redirect_uri"] + "?" + urllib.parse.urlencode(back)
        self.note({"endpoint": "/api/accounts/authorize", "verdict": verdict, "host": host,
                   "port": urllib.parse.urlsplit(q["redirect_uri"]).port})
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return None

    def handle(self, handler):
        path = handler.path.split("?")[0]
        if not path.startswith("/api/accounts/"):
            if not self.token_ok(handler):
                return None
            return super().handle(handler)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", "replace")
        if not handler.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return self.verdict(handler, "refused: not a form", 400, {"error": "invalid_request"})
        f = dict(urllib.parse.parse_qsl(raw))
        if path == "/api/accounts/oauth/revoke":
            return self.revoke(handler, f)
        if path == "/api/accounts/oauth/token":
            return self.token(handler, f)
        return self.send_json(handler, 404, {"error": "not_found"})

    def revoke(self, handler, f):
        with self.lock:
            if f.get("token_type_hint") != "refresh_token" or f.get("client_id") not in self.clients:
                return self.verdict(handler, "revocation refused", 400, {"error": "invalid_request"})
            if f.get("token") == self.refresh:
                self.refresh = None
        handler.send_response(200)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        self.note({"endpoint": "/api/accounts/oauth/revoke", "verdict": "revoked %s" % f.get("token")})
        return None

    def token(self, handler, f):
        grant = f.get("grant_type")
        nonce = None
        if f.get("resource") != RESOURCE:
            return self.verdict(handler, "token refused: resource", 400, {"error": "invalid_target"})
        with self.lock:
            if grant == "authorization_code":
                q = self.codes.pop(f.get("code"), None)
                challenge = b64url(hashlib.sha256(f.get("code_verifier", "").encode()).digest())
                if q is None or q["client_id"] != f.get("client_id") or q["redirect_uri"] != f.get("redirect_uri") \
                        or challenge != q["code_challenge"]:
                    return self.verdict(handler, "code refused", 400, {"error": "invalid_grant"})
                nonce, client = q["nonce"], q["client_id"]
            elif grant == "refresh_token":
                if self.refresh is None or f.get("refresh_token") != self.refresh \
                        or f.get("client_id") not in self.clients or "scope" in f:
                    return self.verdict(handler, "refresh refused", 400,
                                        {"error": "invalid_grant", "error_description": "refresh token reused"})
                client = f["client_id"]
            else:
                return self.verdict(handler, "token refused: grant", 400, {"error": "unsupported_grant_type"})
            self.issued += 1
            access, self.refresh = "at-%d" % self.issued, "rt-%d" % self.issued
            self.access.add(access)
        reply = {"access_token": access, "refresh_token": self.refresh, "token_type": "Bearer",
                 "expires_in": self.args.expires_in, "scope": self.granted(),
                 "id_token": self.id_token(client, nonce)}
        return self.verdict(handler, "%s: issued %s" % (grant, access), 200, reply)

    def id_token(self, client, nonce):
        mode = self.args.id_token
        now = int(time.time())
        claims = {"iss": self.url if mode != "wrong-iss" else "https://issuer.invalid",
                  "aud": [client] if mode != "wrong-aud" else "app_someone_else",
                  "sub": "user-ada", "iat": now, "exp": now + 3600 if mode != "expired" else now - 600,
                  "email": "ada@example.com",
                  "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT, "chatgpt_plan_type": "plus"}}
        if nonce is not None:
            claims["nonce"] = nonce if mode != "wrong-nonce" else "another-nonce"
        header = {"alg": "RS256", "typ": "JWT", "kid": "stand-in-1" if mode != "unknown-kid" else "old-key"}
        signing = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        signature = bytearray(rs256(self.n, self.d, signing.encode()))
        if mode == "bad-signature":
            signature[-1] ^= 1
        return signing + "." + b64url(bytes(signature))

    # --- the backend ----------------------------------------------------------------------------
    def token_ok(self, handler):
        auth = handler.headers.get("Authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else None
        with self.lock:
            refuse = self.refused_tokens < self.args.refuse_token
            if refuse:
                self.refused_tokens += 1
        if refuse or token not in self.access or handler.headers.get("ChatGPT-Account-Id") != ACCOUNT:
            self.note({"endpoint": handler.path, "verdict": "token refused: %s" % token})
            length = int(handler.headers.get("Content-Length") or 0)
            handler.rfile.read(length)
            self.send_json(handler, 401, {"error": {"message": "Your authentication token has expired.",
                                                    "code": "token_expired"}})
            return False
        return True


if __name__ == "__main__":
    threading.stack_size(1 << 20)
    standin.serve(Chatgpt, "A stand-in of OpenAI's sign-in for open-source apps and its API")
