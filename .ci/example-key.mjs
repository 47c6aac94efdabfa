// Registers a new account through the API (the sign-up code read from the local mailbox), signs in and creates an
// API key for the typed-client example; prints only the key. Usage: node .ci/example-key.mjs http://localhost:4510
const base = process.argv[2];
if (!base) throw new Error("usage: node .ci/example-key.mjs <base URL>");

async function call(method, path, body, token) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const email = `example-${Date.now()}@example.com`;
await call("POST", "/api/auth/register", { email, password: "example-password-123", fullName: "API Example" });
let otp;
for (let i = 0; i < 50 && !otp; i++) {
  const mailbox = await call("GET", `/api/dev/mailbox?to=${encodeURIComponent(email)}`);
  otp = mailbox.items.map((m) => /\b(\d{6})\b/.exec(`${m.subject} ${m.text ?? ""}`)?.[1]).find(Boolean);
  if (!otp) await new Promise((resolve) => setTimeout(resolve, 200));
}
if (!otp) throw new Error("no sign-up code in the mailbox");
const { accessToken } = await call("POST", "/api/auth/verify-email", { email, otp });
const key = await call(
  "POST",
  "/api/account/api-keys",
  { name: "CI typed-client example", scopes: ["uploads:write", "workflows:write", "runs:write", "runs:read"], expiresInDays: 1 },
  accessToken,
);
console.log(key.key);
