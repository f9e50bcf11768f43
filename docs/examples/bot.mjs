// A red7es bot in Node.js (20 or later), with nothing but Node's built-ins: no npm
// packages, no red7es, no Redis.  It talks to `red7 gateway` over HTTP exactly as
// docs/gateway.md describes, so it is the reference for writing a bot in any language.
//
//   node docs/examples/bot.mjs http://127.0.0.1:8007 table2 bob
//
// It makes its own token (an Ed25519 key that never leaves this process), joins the
// open seat with the public key, follows the seat's NDJSON stream, and whenever a view
// says it is to move it fetches its legal turns and submits one, signed, until the
// game is over.  Exit status: 0 when the game ended, 1 on an error.
import crypto from "node:crypto";

const [base, game, seatName] = process.argv.slice(2);
if (!base || !game || seatName === undefined) {
  console.error("usage: node bot.mjs BASE_URL GAME SEAT   (e.g. http://127.0.0.1:8007 table2 bob)");
  process.exit(2);
}

// The seat's token: a fresh Ed25519 key.  The gateway only ever sees its public key.
const { privateKey, publicKey } = crypto.generateKeyPairSync("ed25519");
const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");

const sign = (text) => crypto.sign(null, Buffer.from(text, "utf8"), privateKey).toString("hex");

// A signed read: red7es/request/v1\n{METHOD}\n{PATH}\n{TIMESTAMP}\n{NONCE}, where PATH is the
// path as sent, query string included.  A new nonce for every request and reconnection.
function signedHeaders(method, path) {
  const stamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString("hex");
  const signature = sign(`red7es/request/v1\n${method}\n${path}\n${stamp}\n${nonce}`);
  return { "X-Red7-Timestamp": stamp, "X-Red7-Nonce": nonce, "X-Red7-Signature": signature };
}

// Every error is JSON {"error": "one line"} with its HTTP status.
async function call(method, path, { body, signed = false } = {}) {
  const headers = signed ? signedHeaders(method, path) : {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const answer = await response.json();
  return { status: response.status, answer };
}

// The turn's signature, exactly as `red7 move` makes it: red7es/turn/v2\n{game}\n{commitment}\n{id}\n{seat}\n{turn}
// when the game's view says "signs": "red7es/turn/v2" (games created since 5 December 2026: the
// signature is good for this one game), else red7es/turn/v1\n{game}\n{id}\n{seat}\n{turn}.
async function play(seat, turn, view) {
  const id = crypto.randomUUID();
  const head = view.signs === "red7es/turn/v2" ? `red7es/turn/v2\n${game}\n${view.commitment}` : `red7es/turn/v1\n${game}`;
  const sig = sign(`${head}\n${id}\n${seat}\n${turn}`);
  let reply;
  for (let tries = 0; tries < 5; tries++) {
    // 503: stored, but no worker answered in 10 s; the same body again is safe (an id takes effect once).
    reply = await call("POST", `/api/games/${game}/turns`, { body: { id, seat, turn, sig } });
    if (reply.status !== 503) break;
  }
  const { status, answer } = reply;
  console.log(status, turn, "->", status === 200 ? answer.events.map((e) => e.type).join(" ") : answer.error);
  if (status !== 200 && status !== 409) throw new Error(`turn ${turn}: ${status} ${answer.error}`);
}

// The lines of a stream (NDJSON: one JSON object a line; an empty line is a keep-alive).
async function* lines(response) {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line) yield JSON.parse(line);
    }
  }
}

// Pick a turn among the legal ones: this bot keeps its cards and never folds when it can help it.
const choose = (legal) => legal.find((turn) => turn !== "fold") ?? legal[0];

async function main() {
  const joined = await call("POST", `/api/games/${game}/seats/${seatName}/join`, { body: { key: publicHex } });
  if (joined.status !== 200) throw new Error(`join: ${joined.status} ${joined.answer.error}`);
  const seat = joined.answer.seat;
  console.log("joined", game, "as seat", seat, joined.answer.name);
  let last = null; // the last change id seen: a dropped stream resumes after it
  let played = -1; // the view version this bot last moved at, so one view gets one turn
  for (;;) {
    const path = `/api/games/${game}/seats/${seat}/stream` + (last ? `?after=${last}` : "");
    const response = await fetch(base + path, { headers: signedHeaders("GET", path) });
    if (response.status !== 200) throw new Error(`stream: ${response.status} ${(await response.json()).error}`);
    for await (const line of lines(response)) {
      if (line.type === "error") break; // resume from `last` with a new signed request
      if (line.type === "broken") throw new Error(`the game broke: ${line.reason}`);
      if (line.id) last = line.id;
      if (line.type !== "view" || line.view === null) continue;
      const view = line.view;
      if (view.status === "over") {
        console.log("over:", JSON.stringify(view.outcome));
        return;
      }
      if (view.to_move === seat && view.version > played) {
        played = view.version;
        const { status, answer } = await call("GET", `/api/games/${game}/seats/${seat}/legal`, { signed: true });
        if (status !== 200) throw new Error(`legal: ${status} ${answer.error}`);
        if (answer.to_move === seat && answer.legal.length) await play(seat, choose(answer.legal), view);
      }
    }
  }
}

main().catch((error) => {
  console.error("error:", error.message);
  process.exit(1);
});
