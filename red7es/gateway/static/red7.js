/* red7es web table: what the lobby and the table share.

   Cards as colour AND letter+number, the wording of docs/cli.md's narration (the same
   lines `red7 watch` prints: cli/render.py, checked against it by tests/gateway/test_web.py),
   the gateway's API, and Ed25519 in WebCrypto: a seat's token is made and kept in this
   browser and signs its requests and turns exactly as `red7 move` does (docs/gateway.md). */
"use strict";

const Red7 = (() => {
  // Colour letter -> [title, rule], strongest colour first (red7es/cards.py).
  const COLOURS = {
    R: ["Red", "highest card"],
    O: ["Orange", "most cards of one number"],
    Y: ["Yellow", "most cards of one colour"],
    G: ["Green", "most even cards"],
    B: ["Blue", "most different colours"],
    I: ["Indigo", "most cards in a run"],
    V: ["Violet", "most cards below 4"],
  };
  const ORDER = "ROYGBIV";

  /* ------------------------------------------------------------ cards and words */

  function letterOf(rule) {
    return String(rule).trim().charAt(0).toUpperCase();
  }

  function strength(card) {
    return Number(card.slice(1)) * 10 + (7 - ORDER.indexOf(card.charAt(0)));
  }

  function highest(cards) {
    return cards.reduce((a, b) => (strength(b) > strength(a) ? b : a));
  }

  function plural(n, noun, many) {
    return n === 1 ? noun : many || noun + "s";
  }

  /* Why a palette leads under a rule, from its qualifying cards (cli/render.py _why). */
  function why(rule, cards) {
    const n = cards.length;
    const top = n ? highest(cards) : "-";
    switch (letterOf(rule)) {
      case "R":
        return `highest card ${top}`;
      case "O":
        return `${n} ${plural(n, "card")} of number ${n ? cards[0].slice(1) : "-"}`;
      case "Y":
        return `${n} ${n ? COLOURS[cards[0].charAt(0)][0] : ""} ${plural(n, "card")}`;
      case "G":
        return `${n} even ${plural(n, "card")}, highest ${top}`;
      case "B":
        return `${n} ${plural(n, "colour")}, highest ${top}`;
      case "I":
        return `a run of ${n}, up to ${top}`;
      default:
        return `${n} ${plural(n, "card")} below 4, highest ${top}`;
    }
  }

  // Text is a list of parts: strings, {card: "R7"} and {rule: "B"} (a rule in words).
  function cards(list) {
    const out = [];
    list.forEach((card, i) => {
      if (i) out.push(" ");
      out.push({ card });
    });
    return out;
  }

  function plain(parts) {
    return parts
      .map((p) => (typeof p === "string" ? p : p.card ? p.card : `${COLOURS[p.rule][0]} — ${COLOURS[p.rule][1]}`))
      .join("");
  }

  function leaderLine(view) {
    const rule = letterOf(view.rule);
    const title = COLOURS[rule][0];
    if (view.leader === null || view.leader === undefined) {
      return [`Nobody leads under ${title}: no palette has a qualifying card.`];
    }
    const q = view.qualifying || [];
    return [`${view.seats[view.leader].name} leads under ${title} with `, ...cards(q), ` (${why(rule, q)}).`];
  }

  /* How a game over with no winner ended, by its reason (cli/render.py no_winner_text). */
  const NO_WINNER = {
    aborted: "aborted before anyone moved, no winner",
    adjudicated: "adjudicated by the operator, no winner",
  };

  function noWinnerText(reason) {
    return NO_WINNER[reason] || `no winner (${reason})`;
  }

  function outcomeLine(view) {
    const o = view.outcome;
    const why = o.adjudication !== undefined && o.adjudication !== null ? `: ${o.adjudication}` : "";
    if (!o.winners.length) return `Game over: ${noWinnerText(o.reason)}${why}.`;
    const names = o.winners.map((s) => view.seats[s].name);
    const head = names.length > 1 ? `Game over: shared win between ${names.join(" and ")}` : `Game over: ${names[0]} wins`;
    if (o.reason === "adjudicated") return `${head} by the operator's adjudication, not by play${why}.`;
    if (view.variant.scoring) {
      return `${head} (${view.seats.map((s) => `${s.name} ${o.scores[s.seat]}`).join(", ")} points).`;
    }
    if (o.reason === "time" || o.reason === "resigned") return `${head}${o.reason === "time" ? " on time" : ""}: ${lastForfeit(view, o.reason)}`;
    const won = o.round_wins[o.winners[0]];
    return `${head} (${won} round${won === 1 ? "" : "s"} won).`;
  }

  /* Why a game won by forfeit ended: the last seat out, and any out before it (cli/render.py _last_forfeit). */
  function lastForfeit(view, reason) {
    const out = (view.outcome.forfeited || []).map((s) => view.seats[s].name);
    if (!out.length) return reason === "time" ? "every other player ran out of time." : "every other player resigned.";
    const last = `${out[out.length - 1]} ${reason === "time" ? "ran out of time" : "resigned"}`;
    if (out.length === 1) return `${last}.`;
    const before = out.slice(0, -1);
    return `${last} (${before.join(" and ")} ${before.length === 1 ? "was" : "were"} already out of the game).`;
  }

  function nameOf(names, seat) {
    if (Number.isInteger(seat) && seat >= 0 && seat < names.length) return names[seat];
    return `seat ${seat === null || seat === undefined ? "None" : seat}`;
  }

  const REJECTED = { corrupt: "a corrupt command", repeat: "a repeated command" };

  /* One line for a public event, or null for events said elsewhere (cli/render.py describe_event). */
  function describe(event, names) {
    const who = nameOf(names, event.seat);
    switch (event.type) {
      case "GameCreated":
        return [
          "Game created for " +
            (event.seats || []).map((s) => s.name + (s.kind === "bot" ? ` (${s.bot} bot)` : "")).join(", ") +
            ".",
        ];
      case "SeatJoined":
        return [`${event.name} took a seat.`];
      case "RoundDealt":
        return [`Round ${event.round} dealt; palettes `, ...cards(event.palettes), `; ${nameOf(names, event.first)} starts.`];
      case "StepApplied":
        return describeStep(who, event.step);
      case "CardDrawn":
        return [`${who} draws `, event.card ? { card: event.card } : "a card", event.cause === "3" ? " (action of a 3)." : "."];
      case "TurnTakenBack":
        return [
          `${who} takes back their turn (${(event.steps || []).join(" ")}): ` +
            "every card goes back where it was, cards drawn back on top of the deck.",
        ];
      case "PlayerOut":
        return [`${who} is out of the round (${event.reason === "fold" ? "folded" : "no cards left at the start of the turn"}).`];
      case "TimedOut":
        return [`${who}'s turn timed out.`];
      case "Forfeited":
        return [forfeitWords(who, event.reason)];
      case "RoundWon": {
        const out = [`${who} wins round ${event.round} under ${COLOURS[letterOf(event.rule)][0]}`];
        if (event.cards && event.cards.length) {
          const points = event.cards.reduce((sum, c) => sum + Number(c.slice(1)), 0);
          out.push(", scoring ", ...cards(event.cards), ` (${points} points)`);
        }
        out.push(".");
        return out;
      }
      case "TimedOut":
        return [`${who}'s time is up.`];
      case "Forfeited":
        return [`${who} is out of the game (${event.reason === "resigned" ? "resigned" : "out of time"}).`];
      case "Adjudicated": {
        const won = event.winners.map((s) => nameOf(names, s)).join(" and ") || "no winner";
        return [`The operator adjudicated the game (${won}): ${event.reason}`];
      }
      case "GameOver":
        if (!event.winners.length) return [`Game over: ${noWinnerText(event.reason)}.`];
        return [`Game over: ${event.winners.map((s) => nameOf(names, s)).join(" and ")} ${event.winners.length > 1 ? "win" : "wins"}.`];
      case "SeedRevealed":
        return [`Seed revealed: ${event.seed}`];
      case "CommandRejected": {
        const kind = String(event.kind);
        let line = `Rejected ${REJECTED[kind] || `${who}'s ${kind}`}`;
        if (event.text) line += ` '${event.text}'`;
        if (event.reason) line += `: ${event.reason}`;
        return [line];
      }
      default:
        return null;
    }
  }

  /* A seat out of the game for good, and why (cli/render.py forfeit_words). */
  function forfeitWords(who, reason) {
    return reason === "resigned" ? `${who} resigned.` : `${who} forfeited (${reason || "time"}).`;
  }

  /* What a time-out at `at` did to its seat: the index of its fold (turn time) or its
     Forfeited (game clock) in `events`, or -1 (cli/render.py _timeout_outcome). */
  function timeoutOutcome(events, at) {
    const seat = events[at].seat;
    for (let i = at + 1; i < events.length; i++) {
      const e = events[i];
      if (e.seat !== seat) continue;
      if (e.type === "Forfeited" || (e.type === "StepApplied" && e.step === "fold")) return i;
      if (["TimedOut", "CommandApplied", "ClockStarted"].includes(e.type)) return -1;
    }
    return -1;
  }

  /* The lines for a run of events (a change): a time-out and what it did are one line,
     "ann's turn timed out: folded." or the forfeit's own (cli/render.py describe_events). */
  function describeAll(events, names) {
    const saidByTimeout = new Set();
    const out = [];
    events.forEach((event, i) => {
      if (saidByTimeout.has(i)) return;
      let line = describe(event, names);
      if (event.type === "TimedOut") {
        const then = timeoutOutcome(events, i);
        if (then >= 0 && events[then].type === "Forfeited") return;
        if (then >= 0) {
          saidByTimeout.add(then);
          line = [`${nameOf(names, event.seat)}'s turn timed out: folded.`];
        }
      }
      if (line) out.push(line);
    });
    return out;
  }

  function describeStep(who, step) {
    const at = step.indexOf(":");
    const kind = at < 0 ? step : step.slice(0, at);
    const card = at < 0 ? "" : step.slice(at + 1);
    switch (kind) {
      case "p":
        return [`${who} plays `, { card }, " to their palette."];
      case "c":
        return [`${who} discards `, { card }, ": the rule is now ", { rule: card.charAt(0) }, "."];
      case "7c":
        return [`${who} moves `, { card }, " from their palette to the Canvas (action of a 7): the rule is now ", { rule: card.charAt(0) }, "."];
      case "7d":
        return [`${who} puts `, { card }, " from their palette on top of the deck (action of a 7)."];
      case "1":
        return [`${who} takes `, { card }, " from another palette to the top of the deck (action of a 1)."];
      case "fold":
        return [`${who} folds.`];
      default:
        return null; // draw: the CardDrawn event says it; end: the next event shows who moves
    }
  }

  /* A figure as the standings tables print it (red7es.tournament.standings.two_decimals:
     Python's "{:.2f}", which rounds an exact half to even, keeps -0). */
  function twoDecimals(value) {
    const x = Number(value);
    if (Number.isInteger(x * 8) && Math.abs(x * 8) % 2 === 1) {
      const floor = Math.floor(x * 100); // x * 100 is exactly an odd multiple of 12.5
      return ((floor % 2 === 0 ? floor : floor + 1) / 100).toFixed(2);
    }
    return Object.is(x, -0) ? "-0.00" : x.toFixed(2); // toFixed keeps the sign of -0.001, not of -0
  }

  /* ------------------------------------------------------------ time controls */

  const UNITS = [["d", 86400000], ["h", 3600000], ["m", 60000], ["s", 1000], ["ms", 1]];

  /* A duration as red7es/durations.py format_duration spells it: 300ms, 30s, 1h30m, 2d. */
  function durationText(ms) {
    if (!(ms > 0)) return "0s";
    let rest = ms;
    const parts = [];
    for (const [unit, size] of UNITS) {
      if (rest >= size) {
        parts.push(`${Math.floor(rest / size)}${unit}`);
        rest %= size;
      }
    }
    return parts.join("");
  }

  /* A variant's time control as the CLI says it (Variant.describe_time): "clock 5m+5s",
     "30s a turn", or "" for an untimed game. */
  function timeControlText(variant) {
    if (variant && Array.isArray(variant.clock)) {
      const [base, increment] = variant.clock;
      return `clock ${durationText(base)}${increment ? `+${durationText(increment)}` : ""}`;
    }
    if (variant && Number.isInteger(variant.turn_time)) return `${durationText(variant.turn_time)} a turn`;
    return "";
  }

  /* Time left on a clock face: 4:05, 1:02:03, 2d 03:04:05; 0:00 once it is up. */
  function clockFace(ms) {
    const total = Math.max(0, Math.ceil(ms / 1000));
    const days = Math.floor(total / 86400);
    const h = Math.floor((total % 86400) / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = String(total % 60).padStart(2, "0");
    if (days) return `${days}d ${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${s}`;
    return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
  }

  /* ------------------------------------------------------------ the DOM */

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("data-")) node.dataset[k.slice(5).replace(/-([a-z])/g, (_m, c) => c.toUpperCase())] = v;
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  /* A card: its colour, and its letter and number as text (readable without colour). */
  function card(c, extra) {
    return el("span", { class: `card c-${c.charAt(0)}${extra ? " " + extra : ""}`, title: `${COLOURS[c.charAt(0)][0]} ${c.slice(1)}` }, c);
  }

  /* Parts as nodes: text stays text (names are never markup). */
  function render(parts) {
    const frag = document.createDocumentFragment();
    for (const p of parts) {
      if (typeof p === "string") frag.append(p);
      else if (p.card) frag.append(card(p.card));
      else frag.append(el("span", { class: `rule-name r-${p.rule}` }, COLOURS[p.rule][0]), ` — ${COLOURS[p.rule][1]}`);
    }
    return frag;
  }

  function replace(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  }

  /* ------------------------------------------------------------ the API */

  async function api(method, path, body) {
    const init = { method, headers: {}, cache: "no-store" };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let json = null;
    try {
      json = await response.json();
    } catch (_e) {
      json = { error: `${response.status} ${response.statusText}` };
    }
    return { status: response.status, ok: response.ok, json };
  }

  /* The NDJSON lines of a streaming response, as they come. */
  async function* ndjson(response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          if (line.trim()) yield JSON.parse(line);
        }
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  /* ------------------------------------------------------------ keys (WebCrypto Ed25519) */

  // A raw 32-byte Ed25519 private key (a red7es token) as PKCS#8 (RFC 8410).
  const PKCS8_PREFIX = "302e020100300506032b657004220420";

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function unhex(text) {
    const out = new Uint8Array(text.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(i * 2, 2), 16);
    return out;
  }

  function fromBase64url(text) {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    return Uint8Array.from(atob(b64 + "===".slice((b64.length + 3) % 4)), (c) => c.charCodeAt(0));
  }

  function randomHex(n) {
    const bytes = new Uint8Array(n);
    crypto.getRandomValues(bytes);
    return hex(bytes);
  }

  /* Can this page make and use keys? WebCrypto exists only in a secure context
     (HTTPS, or http://127.0.0.1 / localhost): see docs/web.md. */
  function canSign() {
    return Boolean(window.isSecureContext && window.crypto && crypto.subtle);
  }

  /* A new token: 64 hex digits, the raw private key, as `red7 new` prints one. */
  async function newToken() {
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
    const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
    return hex(fromBase64url(jwk.d));
  }

  /* A token's signing key and hex public key. */
  async function keyOf(token) {
    if (!/^[0-9a-f]{64}$/.test(token)) throw new Error("a token is 64 lower-case hex digits");
    const key = await crypto.subtle.importKey("pkcs8", unhex(PKCS8_PREFIX + token), { name: "Ed25519" }, true, ["sign"]);
    const jwk = await crypto.subtle.exportKey("jwk", key);
    return { key, publicKey: hex(fromBase64url(jwk.x)) };
  }

  async function sign(key, text) {
    const signature = await crypto.subtle.sign({ name: "Ed25519" }, key, new TextEncoder().encode(text));
    return hex(new Uint8Array(signature));
  }

  /* The three headers of a signed request (docs/gateway.md, Signed requests). */
  async function signedHeaders(key, method, path) {
    const stamp = String(Date.now());
    const nonce = randomHex(16);
    return {
      "X-Red7-Timestamp": stamp,
      "X-Red7-Nonce": nonce,
      "X-Red7-Signature": await sign(key, `red7es/request/v1\n${method}\n${path}\n${stamp}\n${nonce}`),
    };
  }

  /* A signed turn's body, signed as `red7 move` signs it (red7es.service.tokens.turn_message):
     over the game's commitment too when its view says it signs red7es/turn/v2. */
  async function turnBody(key, game, seat, turn, view) {
    const id = randomHex(16);
    const head = view && view.signs === "red7es/turn/v2" ? `red7es/turn/v2\n${game}\n${view.commitment}` : `red7es/turn/v1\n${game}`;
    return { id, seat, turn, sig: await sign(key, `${head}\n${id}\n${seat}\n${turn}`) };
  }

  // Where a seat's token is kept: this browser's localStorage, one entry per game and seat.
  function storeKey(game, seat) {
    return `red7es:token:${game}:${seat}`;
  }

  return {
    COLOURS,
    api,
    canSign,
    card,
    cards,
    clockFace,
    describe,
    describeAll,
    durationText,
    forfeitWords,
    el,
    keyOf,
    leaderLine,
    letterOf,
    ndjson,
    newToken,
    outcomeLine,
    plain,
    render,
    replace,
    signedHeaders,
    storeKey,
    timeControlText,
    turnBody,
    twoDecimals,
    why,
  };
})();
