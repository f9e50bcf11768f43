/* The table of one game (/g/<game>): the public view, live from the gateway's SSE
   stream (EventSource resumes with Last-Event-ID by itself), and, for a seat this
   browser holds, its hand and legal turns from the seat's signed NDJSON stream.
   Everything shown comes from the views and events the gateway sends (docs/events.md):
   the page decides nothing the referee decides. */
"use strict";

(() => {
  const R = Red7;
  const game = decodeURIComponent(location.pathname.split("/")[2] || "");
  const $ = (id) => document.getElementById(id);
  const state = {
    view: null, // the latest public view
    names: [],
    seen: new Set(), // change ids narrated: each once
    lastChange: null,
    me: null, // {seat, token, key, publicKey}
    seatView: null,
    chosen: [], // the steps of the turn being made
    chosenAt: -1, // the version of the view they were chosen on
    sentAt: -1, // the version a turn was last sent at: not offered again until the view moves on
    sending: false,
    over: false,
    events: null,
    looked: false, // for a seat of this browser's
    linked: null, // {seat, token} from the page's link
    linkProblem: null,
    forfeits: {}, // seat -> why it is out of the game for good ("time", "resigned"), from the events told
    timedOut: {}, // seat -> true: its turn timed out and it folded, this round
    confirmResign: false, // the Resign button was pressed once: asking to confirm
  };

  const TITLE = `Red7 · ${game}`;
  const WARN_MS = 10_000; // a countdown at or under this warns (docs/web.md, Time)
  document.title = TITLE;
  R.replace($("title"), `Game ${game}`);

  /* ---------------------------------------------------------------- the public table */

  function variantText(variant) {
    const flags = ["scoring", "draw", "actions"].filter((f) => variant[f]).join("+") || "basic";
    let text = `${variant.players} players, ${flags}`;
    if (variant.scoring) text += `, target ${variant.target || { 2: 40, 3: 35, 4: 30 }[variant.players]}`;
    else if ((variant.rounds || 1) > 1) text += `, first to ${variant.rounds} rounds`;
    const time = R.timeControlText(variant);
    return time ? `${text}, ${time}` : text;
  }

  function renderView(view) {
    state.view = view;
    state.names = view.seats.map((s) => s.name);
    const table = $("table");
    table.dataset.version = String(view.version);
    table.dataset.status = view.status;
    R.replace($("title"), `Game ${view.game} · ${variantText(view.variant)}${view.round ? ` · round ${view.round}` : ""}`);
    if (!view.rule) {
      R.replace($("status"), "Waiting for a worker to deal the game.");
      renderSeats(view);
      return;
    }
    R.replace($("status"), view.status === "over" ? "The game is over." : "Playing.");
    const letter = R.letterOf(view.rule);
    const [title, rule] = R.COLOURS[letter];
    const ruleCard = $("rule");
    ruleCard.className = `rule-card c-${letter}`;
    R.replace(ruleCard, R.el("span", { class: "rule-letter" }, letter), R.el("span", { class: "rule-title" }, title), R.el("span", { class: "rule-text" }, rule));
    const canvas = view.canvas || [];
    R.replace($("canvas"), ...(canvas.length ? canvas.map((c, i) => R.card(c, i === canvas.length - 1 ? "top" : "")) : [R.el("span", { class: "dim" }, "the Red starter card")]));
    const deck = [`${view.deck_size} ${view.deck_size === 1 ? "card" : "cards"}`];
    for (const [depth, c] of view.deck_known || []) deck.push(` · ${depth === 0 ? "top" : `${ordinal(depth + 1)} from top`}: `, R.card(c));
    R.replace($("deck"), ...deck);
    R.replace($("leader"), R.render(R.leaderLine(view)));
    renderSeats(view);
    renderToMove(view);
    renderClock(view);
    if (view.status === "over") renderEnd(view);
  }

  /* A timed game's clock (docs/events.md, Views): whose time runs and when it is up.  The
     referee's time is Redis's; the countdown here runs on this browser's clock towards the
     view's deadline, so it is as right as the two clocks agree (the deadline is exact). */
  function renderClock(view) {
    const node = $("clock");
    const clock = view.clock;
    if (!clock || view.status === "over") {
      R.replace(node);
      node.hidden = true;
      tick(); // no countdown left: its warning (and the title's) goes too
      return;
    }
    node.hidden = false;
    const name = view.seats[clock.seat].name;
    const at = new Date(clock.deadline).toLocaleTimeString([], { hour12: false });
    R.replace(
      node,
      `${name}'s time is up at ${at}: `,
      R.el("span", { class: "left", "data-deadline": String(clock.deadline) }, R.clockFace(clock.deadline - Date.now())),
      " left.",
    );
    node.dataset.deadline = String(clock.deadline);
    tick();
  }

  /* Every countdown on the page (the clock line, the seat to move's time) runs down to its
     deadline; a new view redraws them. */
  function tick() {
    const now = Date.now();
    for (const node of document.querySelectorAll("[data-deadline]:not(#clock)")) {
      const left = Number(node.dataset.deadline) - now;
      R.replace(node, R.clockFace(left));
      node.classList.toggle("warn", left <= WARN_MS);
    }
    const line = $("clock");
    const running = !line.hidden && line.dataset.deadline && state.view && state.view.clock && state.view.status !== "over";
    const left = running ? Number(line.dataset.deadline) - now : Infinity;
    line.classList.toggle("warn", left <= WARN_MS);
    // The seat's own player is warned in the title too: seen from another tab.
    const mine = running && state.me && state.view.clock.seat === state.me.seat;
    const title = mine && left <= WARN_MS ? `${R.clockFace(left)} left to move! · ${TITLE}` : TITLE;
    if (document.title !== title) document.title = title;
  }

  function ordinal(n) {
    const teen = n % 100 >= 10 && n % 100 <= 20;
    return `${n}${teen ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;
  }

  function renderToMove(view) {
    const node = $("to-move");
    if (view.status === "over" || view.to_move === null || view.to_move === undefined) {
      R.replace(node);
      return;
    }
    const mine = state.me && state.me.seat === view.to_move;
    let line = mine ? "Your turn." : `${view.seats[view.to_move].name} to move.`;
    if ((view.turn_steps || []).length) line += ` This turn so far: ${view.turn_steps.join(" ")}.`;
    if (view.pending) line += ` Owed: ${view.pending}.`;
    R.replace(node, line);
  }

  /* A game clock's seat: its time left, running down for the seat whose clock runs. */
  function seatTime(view, seat) {
    if (seat.time_left === null || seat.time_left === undefined) return [];
    const clock = view.clock;
    const running = clock && clock.seat === seat.seat && view.status !== "over";
    const attrs = { class: "time-left", "data-time-left": String(seat.time_left) };
    if (running) attrs["data-deadline"] = String(clock.deadline);
    return [" · time ", R.el("span", attrs, R.clockFace(running ? clock.deadline - Date.now() : seat.time_left))];
  }

  function renderSeats(view) {
    const scoring = Boolean(view.variant && view.variant.scoring);
    const nodes = view.seats.map((seat) => {
      const leads = view.leader === seat.seat;
      const label = [R.el("span", { class: "name" }, seat.name)];
      if (seat.kind === "bot") label.push(R.el("span", { class: "tag" }, `${seat.bot} bot`));
      else if (!seat.joined) label.push(R.el("span", { class: "tag open" }, "open seat"));
      if (state.me && state.me.seat === seat.seat) label.push(R.el("span", { class: "tag you" }, "you"));
      if (leads) label.push(R.el("span", { class: "tag leads" }, "leads"));
      const out = outOfGame(view, seat.seat);
      let palette;
      if (out) palette = R.el("span", { class: "forfeit" }, out, " Out of the game for good.");
      else if (seat.palette === null || seat.palette === undefined) {
        const why = state.timedOut[seat.seat] ? `${seat.name}'s turn timed out: folded. ` : "";
        palette = R.el("span", { class: "dim" }, why, "out of the round");
      } else palette = R.el("span", { class: "cards" }, ...seat.palette.map((c) => R.card(c, leads && (view.qualifying || []).includes(c) ? "q" : "")));
      if (out) label.push(R.el("span", { class: "tag forfeited" }, "out for good"));
      const facts = R.el(
        "div",
        { class: "facts" },
        R.el("span", { "data-hand-size": String(seat.hand_size ?? "") }, `hand ${seat.hand_size ?? "-"}`),
        " · ",
        scoring ? `score ${seat.score ?? 0}` : `rounds won ${seat.round_wins ?? 0}`,
        ...seatTime(view, seat),
      );
      const node = R.el(
        "div",
        {
          class: `seat${view.to_move === seat.seat && view.status !== "over" ? " moving" : ""}${leads ? " leading" : ""}${out ? " out" : ""}`,
          "data-seat": String(seat.seat),
          "data-out": out ? "true" : null,
        },
        R.el("div", { class: "who" }, view.to_move === seat.seat && view.status !== "over" ? R.el("span", { class: "marker", title: "to move" }, "▶ ") : null, ...label),
        facts,
        R.el("div", { class: "palette" }, palette),
      );
      if (seat.kind === "person" && !seat.joined && !state.me && view.status !== "over") {
        const button = R.el("button", { type: "button", class: "take", "data-take": String(seat.seat) }, "Take this seat");
        button.addEventListener("click", () => takeSeat(seat.seat));
        node.append(button);
      }
      return node;
    });
    R.replace($("seats"), ...nodes);
  }

  /* Whether a seat is out of the game for good, in words ("ann resigned.", "ann forfeited
     (time)."), or null. The reason comes from the Forfeited events told; a page opened after
     them (a finished game's changes are kept for a while only) has the view's `forfeited`
     (timed games) and the outcome's list, whose last seat went out for the outcome's reason. */
  function outOfGame(view, seat) {
    const outcome = view.outcome || {};
    const listed = (outcome.forfeited || []).includes(seat);
    const flagged = view.seats[seat].forfeited || listed || seat in state.forfeits;
    if (!flagged) return null;
    const name = view.seats[seat].name;
    let reason = state.forfeits[seat];
    const last = (outcome.forfeited || [])[(outcome.forfeited || []).length - 1];
    if (!reason && last === seat && ["time", "resigned"].includes(outcome.reason)) reason = outcome.reason;
    return reason ? R.forfeitWords(name, reason) : `${name} is out of the game.`;
  }

  function renderEnd(view) {
    const end = $("end");
    end.hidden = false;
    const record = `/api/games/${encodeURIComponent(view.game)}/record?format=jsonl`;
    R.replace(
      end,
      R.el("h2", {}, R.outcomeLine(view)),
      view.seed ? R.el("p", {}, "Seed revealed: ", R.el("code", { id: "seed" }, view.seed)) : null,
      R.el("p", {}, `Commitment published at the start: `, R.el("code", {}, view.commitment || "")),
      R.el(
        "p",
        {},
        R.el("a", { id: "record", href: record, download: `${view.game}.jsonl` }, "Download the record"),
        " and check every move, every signature and the deal from the seed yourself: ",
        R.el("code", {}, `red7 audit ${view.game}.jsonl`),
      ),
    );
  }

  function narrate(change) {
    if (state.seen.has(change.id)) return; // resumed streams never repeat one; be sure all the same
    state.seen.add(change.id);
    state.lastChange = change.id;
    for (const e of change.events || []) {
      if (e.type === "GameCreated" && !state.names.length) state.names = (e.seats || []).map((s) => s.name);
    }
    const events = change.events || [];
    const lines = R.describeAll(events, state.names);
    let seatsChanged = false;
    events.forEach((e, i) => {
      if (e.type === "RoundDealt") state.timedOut = {};
      else if (e.type === "Forfeited") state.forfeits[e.seat] = e.reason;
      else if (e.type === "TimedOut" && events.slice(i + 1).some((f) => f.seat === e.seat && f.type === "StepApplied" && f.step === "fold")) {
        state.timedOut[e.seat] = true;
      } else return;
      seatsChanged = true;
    });
    const item = R.el("li", { class: lines.length ? "change" : "change quiet", "data-change": change.id, "data-to": String(change.to) });
    for (const line of lines) item.append(R.el("p", {}, R.render(line)));
    $("log").prepend(item);
    $("table").dataset.changedTo = String(change.to);
    for (const e of change.events || []) {
      if (e.type === "SeatJoined" && state.view) state.view.seats[e.seat].joined = true;
    }
    if (seatsChanged && state.view) renderSeats(state.view);
  }

  /* ---------------------------------------------------------------- the public stream */

  function follow() {
    const after = state.lastChange || "0-0"; // from the start: the whole game in words
    const source = new EventSource(`/api/games/${encodeURIComponent(game)}/stream?after=${after}`);
    state.events = source;
    const connection = $("connection");
    source.onopen = () => R.replace(connection, "live");
    source.addEventListener("change", (m) => narrate(JSON.parse(m.data)));
    source.addEventListener("view", (m) => {
      const line = JSON.parse(m.data);
      if (!line.view) return;
      renderView(line.view);
      if (!state.looked) {
        state.looked = true;
        findMine(line.view); // a seat this browser holds: its token is kept here
      }
      if (line.view.status === "over") {
        state.over = true;
        source.close(); // the stream ends here: don't let EventSource reopen it
        R.replace(connection, "finished");
        if (state.me) renderYou();
      }
    });
    source.addEventListener("broken", (m) => {
      source.close();
      R.replace($("status"), `The game broke: ${JSON.parse(m.data).reason}`);
      R.replace(connection, "broken");
    });
    source.addEventListener("error", (m) => {
      if (m.data) {
        R.replace(connection, `reconnecting (${JSON.parse(m.data).error})`);
        return; // the gateway ends the stream: EventSource resumes from its last id by itself
      }
      if (source.readyState === EventSource.CLOSED && !state.over) {
        // refused outright (not just dropped): EventSource gives up; start again after the last change
        R.replace(connection, "reconnecting…");
        setTimeout(follow, 2000);
      } else if (!state.over) {
        R.replace(connection, "reconnecting…");
      }
    });
  }

  /* The public view once, before the stream: an unknown game stops here (a game no worker
     has dealt yet answers 503, and its stream brings the view once there is one). */
  async function loadOnce() {
    const r = await R.api("GET", `/api/games/${encodeURIComponent(game)}`);
    if (r.ok) renderView(r.json);
    else R.replace($("status"), r.json.error || `error ${r.status}`);
    if (r.status === 404) $("table").dataset.status = "error";
    return r.status !== 404;
  }

  /* ---------------------------------------------------------------- a seat of one's own */

  const NEEDS_HTTPS =
    "Playing a seat needs WebCrypto, which browsers give only to HTTPS pages (or http://127.0.0.1): see docs/web.md.";

  /* A line about the table as a whole (a seat that could not be taken, a bad link), kept until the next. */
  function notice(text) {
    R.replace($("notice"), text || "");
  }

  function message(text, kind) {
    const node = $("message");
    node.className = `message ${kind || ""}`;
    R.replace(node, text || "");
  }

  async function takeSeat(seat) {
    if (!R.canSign()) {
      notice(NEEDS_HTTPS);
      return;
    }
    notice("");
    for (const b of document.querySelectorAll("button.take")) b.disabled = true;
    const token = await R.newToken();
    const key = await R.keyOf(token);
    localStorage.setItem(R.storeKey(game, seat), token); // before the join: one that times out may still take the seat
    const r = await R.api("POST", `/api/games/${encodeURIComponent(game)}/seats/${seat}/join`, { key: key.publicKey });
    if (!r.ok) {
      if (r.status !== 503) localStorage.removeItem(R.storeKey(game, seat));
      notice(`Could not take the seat: ${r.json.error}`);
      for (const b of document.querySelectorAll("button.take")) b.disabled = false;
      return;
    }
    hold(seat, token, key);
  }

  /* A link `/g/<game>#seat=N&token=HEX` hands this page a seat's token: taken out of the
     address bar at once, and kept (in localStorage) once it proves to be that seat's. */
  function tokenFromLink() {
    if (!location.hash) return;
    const params = new URLSearchParams(location.hash.slice(1));
    history.replaceState(null, "", location.pathname + location.search);
    const seat = params.get("seat");
    const token = (params.get("token") || "").toLowerCase();
    if (seat === null && !params.get("token")) return;
    if (seat === null || !/^[0-9]+$/.test(seat) || !/^[0-9a-f]{64}$/.test(token)) {
      state.linkProblem = "This link is not a seat's: it must end #seat=NUMBER&token=64 hex digits.";
      return;
    }
    state.linked = { seat: Number(seat), token };
  }

  /* The seat this browser holds in the game: a kept (or linked) token whose public key the seat joined with. */
  async function findMine(view) {
    if (state.linkProblem) notice(state.linkProblem);
    if (!R.canSign()) {
      if (state.linked) notice(NEEDS_HTTPS);
      return;
    }
    if (state.linked) {
      const { seat, token } = state.linked;
      const key = await R.keyOf(token);
      const entry = view.seats[seat];
      if (entry && entry.key === key.publicKey) {
        localStorage.setItem(R.storeKey(game, seat), token);
        hold(seat, token, key);
        return;
      }
      notice(entry ? `This link's token is not the one seat ${seat} (${entry.name}) joined with: it is ignored.` : `This game has no seat ${seat}: the link is ignored.`);
    }
    for (const seat of view.seats) {
      const token = localStorage.getItem(R.storeKey(game, seat.seat));
      if (!token) continue;
      let key;
      try {
        key = await R.keyOf(token);
      } catch (_e) {
        localStorage.removeItem(R.storeKey(game, seat.seat));
        continue;
      }
      if (seat.key === key.publicKey) {
        hold(seat.seat, token, key);
        return;
      }
      if (seat.key) localStorage.removeItem(R.storeKey(game, seat.seat)); // someone else's now
    }
  }

  function hold(seat, token, key) {
    state.me = { seat, token, key: key.key, publicKey: key.publicKey };
    $("you").hidden = false;
    R.replace($("you-title"), `You are ${state.view.seats[seat].name} (seat ${seat})`);
    renderView(state.view);
    followSeat();
  }

  async function followSeat() {
    let after = null;
    let pause = 500;
    while (!state.over) {
      const path = `/api/games/${encodeURIComponent(game)}/seats/${state.me.seat}/stream${after ? `?after=${after}` : ""}`;
      try {
        const response = await fetch(path, { headers: await R.signedHeaders(state.me.key, "GET", path), cache: "no-store" });
        if (!response.ok) {
          const body = await response.json().catch(() => ({ error: `${response.status}` }));
          message(`Your seat's stream: ${body.error}`, "bad");
          if (response.status === 401 || response.status === 403) return; // not this seat's key: nothing to retry
        } else {
          pause = 500;
          for await (const line of R.ndjson(response)) {
            if (line.type === "change") after = line.id;
            else if (line.type === "view" && line.view) {
              after = line.id || after;
              state.seatView = line.view;
              renderYou();
              if (line.view.status === "over") return;
            } else if (line.type === "broken") return;
            else if (line.type === "error") break; // resume from `after`
          }
        }
      } catch (_e) {
        // dropped (the gateway went away): sign a new request and resume after the last change
      }
      await new Promise((done) => setTimeout(done, pause));
      pause = Math.min(pause * 2, 4000);
    }
  }

  function nextSteps(legal, chosen) {
    const next = [];
    let complete = false;
    for (const turn of legal) {
      const steps = turn.split(" ");
      if (steps.length < chosen.length || !chosen.every((s, i) => steps[i] === s)) continue;
      if (steps.length === chosen.length) complete = true;
      else if (!next.includes(steps[chosen.length])) next.push(steps[chosen.length]);
    }
    return { next, complete };
  }

  const STEP_GROUPS = [
    ["p", "Play to your palette"],
    ["c", "Discard to the Canvas"],
    ["7c", "7: move to the Canvas"],
    ["7d", "7: put on the deck"],
    ["1", "1: take to the deck"],
  ];

  function stepLabel(step) {
    if (step === "fold") return "Fold (out of the round)";
    if (step === "draw") return "Draw a card";
    if (step === "...") return "Stop here to see the drawn card";
    if (step === "end") return "End the turn";
    return step;
  }

  function renderYou() {
    const view = state.seatView;
    const you = $("you");
    if (!view) return;
    const hand = view.hand || [];
    const toMove = view.status !== "over" && view.to_move === state.me.seat && (view.legal || []).length > 0;
    const offer = toMove && !state.sending && view.version > state.sentAt;
    if (!offer || state.chosenAt !== view.version) state.chosen = []; // steps chosen on an older view are void
    state.chosenAt = view.version;
    const { next, complete } = offer ? nextSteps(view.legal, state.chosen) : { next: [], complete: false };
    you.dataset.state = view.status === "over" ? "over" : state.sending ? "sending" : offer ? "move" : "wait";
    you.dataset.version = String(view.version);
    const handNodes = hand.map((c) => {
      const step = next.includes(`p:${c}`) ? `p:${c}` : next.includes(`c:${c}`) ? `c:${c}` : null;
      const chosen = state.chosen.some((s) => s.endsWith(`:${c}`));
      const node = R.card(c, `${step ? "can" : ""}${chosen ? " chosen" : ""}`);
      if (step) {
        node.setAttribute("role", "button");
        node.tabIndex = 0;
        node.dataset.step = step;
        node.addEventListener("click", () => choose(step));
        node.addEventListener("keydown", (e) => (e.key === "Enter" || e.key === " ") && choose(step));
      }
      return node;
    });
    R.replace($("hand"), ...(handNodes.length ? handNodes : [R.el("span", { class: "dim" }, "(empty)")]));
    const chooser = $("chooser");
    if (!offer) {
      R.replace(chooser, R.el("p", { class: "dim" }, view.status === "over" ? "The game is over." : state.sending ? "Sending your turn…" : "Waiting for the other players."));
    } else {
      const rows = [];
      rows.push(R.el("p", { class: "your-turn" }, "Your turn: ", state.chosen.length ? `so far ${state.chosen.join(" ")}` : "choose a card to play and/or one to discard, or fold."));
      for (const [kind, title] of STEP_GROUPS) {
        const steps = next.filter((s) => s.startsWith(`${kind}:`));
        if (!steps.length) continue;
        rows.push(R.el("div", { class: "step-row" }, R.el("span", { class: "label" }, title), ...steps.map((s) => stepButton(s, R.card(s.slice(kind.length + 1))))));
      }
      const other = next.filter((s) => !s.includes(":"));
      if (other.length) rows.push(R.el("div", { class: "step-row" }, R.el("span", { class: "label" }, "Or"), ...other.map((s) => stepButton(s, stepLabel(s)))));
      const send = R.el("button", { type: "button", id: "send", class: "send", disabled: !complete }, complete ? `Send: ${state.chosen.join(" ")}` : "Send");
      send.addEventListener("click", () => sendTurn(state.chosen.join(" ")));
      const clear = R.el("button", { type: "button", id: "clear", disabled: !state.chosen.length }, "Start the turn again");
      clear.addEventListener("click", () => {
        state.chosen = [];
        renderYou();
      });
      rows.push(R.el("div", { class: "step-row actions" }, send, clear));
      R.replace(chooser, ...rows);
    }
    renderResign(view);
    if (view.rejected && view.rejected.reason && !$("message").textContent) {
      message(`Your last refused turn, ${view.rejected.turn}: ${view.rejected.reason}`, "bad");
    }
  }

  /* Resign: the whole game, at any time the seat is still in it (RULES.md, Resigning). Two
     clicks: Resign, then "Yes, resign"; sent as the turn "resign", signed as every turn is. */
  function renderResign(view) {
    const box = $("resign");
    const out = view.status === "over" || outOfGame(view, state.me.seat) !== null;
    if (out) {
      state.confirmResign = false;
      R.replace(box);
      return;
    }
    if (!state.confirmResign) {
      const button = R.el("button", { type: "button", id: "resign-game", class: "resign", disabled: state.sending }, "Resign…");
      button.addEventListener("click", () => {
        state.confirmResign = true;
        renderYou();
      });
      R.replace(box, button);
      return;
    }
    const yes = R.el("button", { type: "button", id: "resign-yes", class: "resign", disabled: state.sending }, "Yes, resign");
    yes.addEventListener("click", () => {
      state.confirmResign = false;
      sendTurn("resign");
    });
    const no = R.el("button", { type: "button", id: "resign-no" }, "No, play on");
    no.addEventListener("click", () => {
      state.confirmResign = false;
      renderYou();
    });
    R.replace(box, R.el("span", { class: "confirm" }, "Resign the whole game? You are out for good; the others play on. "), yes, " ", no);
  }

  function stepButton(step, content) {
    const button = R.el("button", { type: "button", class: "step", "data-step": step }, content);
    button.addEventListener("click", () => choose(step));
    return button;
  }

  function choose(step) {
    state.chosen = [...state.chosen, step];
    message("");
    const { next, complete } = nextSteps(state.seatView.legal || [], state.chosen);
    if (complete && !next.length) {
      sendTurn(state.chosen.join(" ")); // one way to finish: send it (as the CLI's menu does)
      return;
    }
    renderYou();
  }

  async function sendTurn(turn) {
    const version = state.seatView.version;
    state.sending = true;
    renderYou();
    let r;
    try {
      const body = await R.turnBody(state.me.key, game, state.me.seat, turn, state.seatView);
      r = await R.api("POST", `/api/games/${encodeURIComponent(game)}/turns`, body);
    } catch (e) {
      r = { ok: false, status: 0, json: { error: `the gateway could not be reached (${e.message}): try again` } };
    }
    state.sending = false;
    if (r.ok) {
      state.sentAt = version;
      message("");
    } else {
      message(r.json.error || `error ${r.status}`, "bad"); // the referee's one line, e.g. "rejected: it is not ann's turn"
    }
    state.chosen = [];
    renderYou();
  }

  /* ---------------------------------------------------------------- start */

  setInterval(() => !state.over && tick(), 250);
  (async () => {
    tokenFromLink();
    if (await loadOnce()) follow();
  })();
})();
