#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in of OpenAI's sign-in for apps (an OAuth 2.0 and OpenID Connect issuer) and of the
ChatGPT backend's Responses API behind it, for sion's suites (Python standard library only).

The issuer, at this server's URL (its "iss"), CHECKS what it is sent:
  POST /oauth/register  the app registers: client_name "Siontology", token_endpoint_auth_method
      "none", a loopback redirect URI (http://127.0.0.1:PORT/auth/callback); a client id back.
  GET /oauth/authorize  response_type code, a registered client_id, a loopback redirect_uri on
      /auth/callback (any port, RFC 8252), the scopes openid, offline_access and
      chatgpt.tokens.use.direct, an S256 code_challenge, state and nonce; it redirects (302) to
      the redirect URI with a code and the state (or error=access_denied with --deny).
  POST /oauth/token  authorization_code (the code once, the same client and redirect URI, the
      verifier whose S256 is the challenge) or refresh_token (only the newest refresh token: each
      renewal gives a new one and the old is refused with invalid_grant). Tokens "at-N" and
      "rt-N"; access tokens live --expires-in seconds; an ID token signed RS256 with a key made
      at start (kid "stand-in-1").
  GET /.well-known/jwks.json  that key.
--id-token spoils the ID token, to test sion's checks: bad-signature, wrong-iss, wrong-aud,
wrong-nonce, expired, no-plan (chatgpt.tokens.use.direct not granted), unknown-kid.

The backend (/backend-api/codex): POST /responses is responses_server.py's (no max_output_tokens),
with a live access token of this issuer and ChatGPT-Account-Id "acct-stand-in"; --refuse-token N
refuses the first N requests with 401 whatever their token (as a token revoked early). GET /models
lists the plan's models. The issuer's log entries are {"endpoint", "verdict"}. --key-file keeps
the key between stand-ins.
"""
import base64
import hashlib
import json
import os
import random
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import responses_server  # noqa: E402
import standin  # noqa: E402

ACCOUNT = "acct-stand-in"
SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
SCOPES = {"openid", "offline_access", "chatgpt.tokens.use.direct"}
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
        parser.add_argument("--expires-in", type=int, default=3600)
        parser.add_argument("--refuse-token", type=int, default=0)
        parser.add_argument("--key-file", help="the RSA key, made and kept there when missing")

    def __init__(self, args):
        args.path = "/backend-api/codex/responses"
        args.room = False
        super().__init__(args)
        self.n, self.e, self.d = kept_key(args.key_file)
        self.clients = set()
        self.codes = {}  # code -> the authorize request's parameters
        self.access = set()
        self.refresh = None  # the one refresh token that may be used
        self.issued = 0
        self.refused_tokens = 0

    # --- the issuer -----------------------------------------------------------------------------
    def verdict(self, handler, verdict, status, obj, headers=None):
        self.note({"endpoint": handler.path.split("?")[0], "verdict": verdict})
        self.send_json(handler, status, obj, headers)

    def handle_get(self, handler):
        path, _, query = handler.path.partition("?")
        if path == "/.well-known/jwks.json":
            key = {"kty": "RSA", "kid": "stand-in-1", "alg": "RS256", "use": "sig",
                   "n": b64url(self.n.to_bytes((self.n.bit_length() + 7) // 8, "big")),
                   "e": b64url(self.e.to_bytes(3, "big"))}
            return self.send_json(handler, 200, {"keys": [key]})
        if path == "/oauth/authorize":
            return self.authorize(handler, dict(urllib.parse.parse_qsl(query)))
        if path == "/backend-api/codex/models":
            if not self.token_ok(handler):
                return None
            return self.send_json(handler, 200, {"models": [{"slug": "gpt-5.2-codex"}, {"slug": "gpt-5.2"}]})
        return self.send_json(handler, 404, {"error": "not_found"})

    def authorize(self, handler, q):
        wrong = []
        if q.get("response_type") != "code":
            wrong.append("response_type")
        if q.get("client_id") not in self.clients:
            wrong.append("client_id")
        if not loopback_callback(q.get("redirect_uri")):
            wrong.append("redirect_uri")
        if not SCOPES <= set(q.get("scope", "").split()):
            wrong.append("scope")
        if q.get("code_challenge_method") != "S256" or len(q.get("code_challenge", "")) != 43:
            wrong.append("code_challenge")
        if not q.get("state") or not q.get("nonce"):
            wrong.append("state or nonce")
        if wrong:
            return self.verdict(handler, "authorize refused: " + ", ".join(wrong), 400,
                                {"error": "invalid_request", "error_description": ", ".join(wrong)})
        back = {"state": q["state"]}
        if self.args.deny:
            back["error"] = "access_denied"
        else:
            code = "code-%d" % random.SystemRandom().getrandbits(64)
            with self.lock:
                self.codes[code] = q
            back["code"] = code
        location = q["redirect_uri"] + "?" + urllib.parse.urlencode(back)
        self.note({"endpoint": "/oauth/authorize", "verdict": "redirected",
                   "port": urllib.parse.urlsplit(q["redirect_uri"]).port})
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return None

    def handle(self, handler):
        path = handler.path.split("?")[0]
        if path not in ("/oauth/register", "/oauth/token"):
            if not self.token_ok(handler):
                return None
            return super().handle(handler)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", "replace")
        if path == "/oauth/register":
            return self.register(handler, raw)
        return self.token(handler, dict(urllib.parse.parse_qsl(raw)),
                          handler.headers.get("Content-Type", ""))

    def register(self, handler, raw):
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        uris = body.get("redirect_uris") or []
        if body.get("client_name") != "Siontology" or body.get("token_endpoint_auth_method") != "none" \
                or not uris or not all(loopback_callback(u) for u in uris):
            return self.verdict(handler, "registration refused", 400, {"error": "invalid_client_metadata"})
        client = "app_stand_in_%d" % (len(self.clients) + 1)
        with self.lock:
            self.clients.add(client)
        return self.verdict(handler, "registered " + client, 201,
                            {"client_id": client, "token_endpoint_auth_method": "none"})

    def token(self, handler, f, content_type):
        if not content_type.startswith("application/x-www-form-urlencoded"):
            return self.verdict(handler, "token refused: not a form", 400, {"error": "invalid_request"})
        grant = f.get("grant_type")
        nonce = None
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
                        or f.get("client_id") not in self.clients:
                    return self.verdict(handler, "refresh refused", 400,
                                        {"error": "invalid_grant", "error_description": "refresh token reused"})
                client = f["client_id"]
            else:
                return self.verdict(handler, "token refused: grant", 400, {"error": "unsupported_grant_type"})
            self.issued += 1
            access, self.refresh = "at-%d" % self.issued, "rt-%d" % self.issued
            self.access.add(access)
        reply = {"access_token": access, "refresh_token": self.refresh, "token_type": "Bearer",
                 "expires_in": self.args.expires_in, "id_token": self.id_token(client, nonce)}
        return self.verdict(handler, "%s: issued %s" % (grant, access), 200, reply)

    def id_token(self, client, nonce):
        mode = self.args.id_token
        now = int(time.time())
        scopes = sorted(SCOPES - ({"chatgpt.tokens.use.direct"} if mode == "no-plan" else set()))
        claims = {"iss": self.url if mode != "wrong-iss" else "https://issuer.invalid",
                  "aud": client if mode != "wrong-aud" else "app_someone_else",
                  "iat": now, "exp": now + 3600 if mode != "expired" else now - 600,
                  "email": "ada@example.com",
                  "https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT, "chatgpt_plan_type": "plus",
                                                  "scp": scopes}}
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
    standin.serve(Chatgpt, "A stand-in of OpenAI's sign-in and the ChatGPT backend")
