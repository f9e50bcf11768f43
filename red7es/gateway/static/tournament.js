/* A tournament's page (/t/<tournament>): who plays, the standings, the rounds and their
   games (each linking to its table), live from the tournament's SSE stream
   (GET /api/tournaments/<t>/stream, docs/gateway.md): no polling.  The stream tells
   rounds paired and games started and finished; the standings are the gateway's own
   (GET /api/tournaments/<t>/standings, read again when a game finishes, and the final
   ones come with tournament_over): the page computes no points, tie-break or rating.
   Every line is handled so that one told twice (a resumed stream may) changes nothing. */
"use strict";

(() => {
  const R = Red7;
  const tournament = decodeURIComponent(location.pathname.split("/")[2] || "");
  const $ = (id) => document.getElementById(id);
  const base = `/api/tournaments/${encodeURIComponent(tournament)}`;
  const state = {
    show: null, // the tournament as GET /api/tournaments/<t> shows it, kept up to date by the stream
    played: -1, // games_played of the standings shown
    final: false,
    source: null,
    asking: false, // a standings request is under way
    askAgain: false,
  };

  document.title = `Red7 · tournament ${tournament}`;
  R.replace($("title"), `Tournament ${tournament}`);

  function formatName(format) {
    return format === "swiss" ? "Swiss" : format === "round-robin" ? "round robin" : String(format);
  }

  function variantText(variant) {
    const flags = ["scoring", "draw", "actions"].filter((f) => variant[f]).join("+") || "basic";
    let text = `tables of ${variant.players}, ${flags}`;
    if (variant.scoring && variant.target) text += `, target ${variant.target}`;
    else if ((variant.rounds || 1) > 1) text += `, first to ${variant.rounds} rounds`;
    return text;
  }

  function entrantText(e) {
    const withdrawn = state.show && state.show.withdrawn && Object.hasOwn(state.show.withdrawn, e.name) ? ", withdrawn" : "";
    return e.kind === "bot" ? `${e.name} (${e.bot} bot${withdrawn})` : withdrawn ? `${e.name} (withdrawn)` : e.name;
  }

  /* ---------------------------------------------------------------- what it is, and its rounds */

  function renderShow() {
    const t = state.show;
    const main = $("tournament");
    main.dataset.status = t.finished ? "finished" : t.paired.length ? "in progress" : "not started";
    main.dataset.played = String(t.games_played);
    R.replace($("title"), t.name && t.name !== t.tournament ? `${t.name} (${t.tournament})` : `Tournament ${t.tournament}`);
    document.title = `Red7 · ${t.name || t.tournament}`;
    $("about").hidden = false;
    const rounds = `${t.rounds} ${t.rounds === 1 ? "round" : "rounds"}`;
    R.replace($("format"), `${formatName(t.format)}, ${rounds}, ${variantText(t.variant)}.`);
    R.replace($("entrants"), t.entrants.map(entrantText).join(", "));
    const round = t.paired.length ? `; round ${t.paired.length} of ${t.rounds} paired` : "";
    R.replace($("progress"), `${t.games_played} of ${t.games_total} games played${round}.`);
    $("report").setAttribute("href", `${base}/report`);
    R.replace(
      $("status"),
      t.finished ? "The tournament is over." : t.paired.length ? "Playing." : "Not started yet: no round is paired.",
    );
    R.replace($("rounds"), ...(t.paired.length ? t.paired.map(roundNode) : [R.el("p", { class: "dim" }, "No round is paired yet.")]));
    if (t.finished) renderEnd();
  }

  /* A game's status as the page says it (show's statuses, and the stream's news). */
  function statusText(table) {
    switch (table.status) {
      case "recorded":
        if (table.reason === "aborted") return "finished · aborted before anyone moved (a loss for every seat)";
        if (table.reason === "adjudicated" && table.winners && !table.winners.length) {
          return "finished · adjudicated with no winner (a loss for every seat)";
        }
        return table.winners && table.winners.length
          ? `finished · ${table.winners.length > 1 ? `shared win: ${table.winners.join(" and ")}` : `won by ${table.winners[0]}`}`
          : "finished";
      case "over":
        return "finished · the result is being recorded";
      case "playing":
        return "live";
      case "new":
        return "starting";
      case "not created":
        return "not started";
      default:
        return String(table.status);
    }
  }

  function roundNode(round) {
    const items = round.tables.map((table) =>
      R.el(
        "li",
        { "data-game": table.game, "data-status": table.status },
        `Table ${table.table}: `,
        R.el("a", { href: `/g/${encodeURIComponent(table.game)}` }, table.game),
        ` · ${table.seats.join(" v ")} · `,
        R.el("span", { class: `game-status s-${String(table.status).replace(/ /g, "-")}` }, statusText(table)),
      ),
    );
    return R.el(
      "div",
      { class: "round", "data-round": String(round.round) },
      R.el("h3", {}, `Round ${round.round}`),
      R.el("ul", { class: "games" }, ...items),
      round.byes.length ? R.el("p", { class: "dim" }, `Bye: ${round.byes.join(", ")}`) : null,
    );
  }

  function renderEnd() {
    const t = state.show;
    const end = $("end");
    end.hidden = false;
    R.replace(
      end,
      R.el("h2", {}, "The tournament is over: the standings above are final."),
      t.seed ? R.el("p", {}, "Seed revealed: ", R.el("code", { id: "seed" }, t.seed)) : null,
      R.el("p", {}, "Commitment published at the start: ", R.el("code", {}, t.commitment || "")),
      R.el(
        "p",
        {},
        "Anyone with access to its Redis can check every pairing, game and result: ",
        R.el("code", {}, `red7 tournament audit ${t.tournament}`),
        ".",
      ),
    );
  }

  function tableOf(game) {
    for (const round of state.show.paired) for (const table of round.tables) if (table.game === game) return table;
    return null;
  }

  /* ---------------------------------------------------------------- the standings */

  const COLUMNS = [
    ["#", (s) => String(s.rank)],
    ["Player", (s) => (s.kind === "bot" ? `${s.name} (${s.bot} bot)` : s.name) + (s.withdrawn ? " (withdrawn)" : ""), "l"],
    ["Games", (s) => String(s.games)],
    ["Wins", (s) => String(s.wins)],
    ["Points", (s) => R.twoDecimals(s.points)],
    ["Rounds won", (s) => String(s.round_wins), "more"],
    ["Byes", (s) => String(s.byes), "more"],
    ["Buchholz", (s) => R.twoDecimals(s.buchholz || 0), "more", "swiss"],
    ["Ordinal", (s) => R.twoDecimals(s.ordinal), "more"],
  ];

  /* The standings (the rows of `red7 tournament standings --json`), after `played` games. */
  function renderStandings(rows, played, final) {
    if (state.final && !final) return; // an answer asked before the end: the final ones are shown
    if (!final && played < state.played) return; // an older answer than the one shown
    state.final = final;
    state.played = played;
    const swiss = state.show && state.show.format === "swiss";
    const columns = COLUMNS.filter((c) => c[3] !== "swiss" || swiss);
    const table = $("standings");
    table.dataset.played = String(played);
    table.dataset.final = String(final);
    R.replace(table.tHead, R.el("tr", {}, ...columns.map(([head, _f, cls]) => R.el("th", { class: cls || null, title: head === "Ordinal" ? "rating: OpenSkill μ − 3σ" : null }, head))));
    R.replace(
      table.tBodies[0],
      ...rows.map((s) => R.el("tr", { "data-name": s.name }, ...columns.map(([_h, figure, cls]) => R.el("td", { class: cls || null }, figure(s))))),
    );
    R.replace($("h-standings"), final ? "Final standings" : `Standings after ${played} ${played === 1 ? "game" : "games"}`);
  }

  /* Read the standings now; asked again while a request is under way, once more after it. */
  async function askStandings() {
    if (state.asking) {
      state.askAgain = true;
      return;
    }
    state.asking = true;
    try {
      do {
        state.askAgain = false;
        const r = await R.api("GET", `${base}/standings`);
        if (r.ok) renderStandings(r.json.standings, r.json.games_played, r.json.finished);
      } while (state.askAgain);
    } catch (_e) {
      // the gateway went away: the stream's next game_finished (or its state, once resumed) asks again
    } finally {
      state.asking = false;
    }
  }

  /* ---------------------------------------------------------------- the stream's lines */

  function onState(line) {
    state.show = line.tournament;
    renderShow();
    askStandings();
  }

  function onRoundPaired(line) {
    if (state.show.paired.some((r) => r.round === line.round)) return; // told already
    state.show.paired.push({
      round: line.round,
      byes: line.byes,
      tables: line.tables.map((t) => ({ table: t.table, game: t.game, seats: t.seats, status: "not created", winners: null, reason: null })),
    });
    state.show.paired.sort((a, b) => a.round - b.round);
    renderShow();
  }

  function onGameStarted(line) {
    const table = tableOf(line.game);
    if (!table || table.status === "recorded" || table.status === "over" || table.status === "playing") return;
    table.status = "playing"; // it exists and is dealt
    renderShow();
  }

  function onGameFinished(line) {
    const table = tableOf(line.game);
    if (table && table.status !== "recorded") {
      table.status = "recorded";
      table.winners = line.winners;
      table.reason = line.reason;
      state.show.games_played += 1;
      renderShow();
    }
    askStandings();
  }

  /* An entrant withdrawn (docs/tournaments.md, Withdrawing): named so among the entrants,
     and in the standings read again. */
  function onWithdrew(line) {
    state.show.withdrawn = { ...(state.show.withdrawn || {}), [line.entrant]: line.reason };
    renderShow();
    askStandings();
  }

  function onOver(line) {
    state.show.finished = true;
    state.show.seed = line.seed;
    state.show.games_played = state.show.games_total;
    renderShow();
    renderStandings(line.standings, state.show.games_total, true);
  }

  function follow() {
    const source = new EventSource(`${base}/stream`);
    state.source = source;
    const connection = $("connection");
    const stop = (text) => {
      source.close(); // the stream ends here: don't let EventSource reopen it
      R.replace(connection, text);
    };
    source.onopen = () => R.replace(connection, "live");
    source.addEventListener("state", (m) => {
      const line = JSON.parse(m.data);
      onState(line);
      if (line.tournament.finished) stop("finished");
    });
    source.addEventListener("round_paired", (m) => onRoundPaired(JSON.parse(m.data)));
    source.addEventListener("game_started", (m) => onGameStarted(JSON.parse(m.data)));
    source.addEventListener("game_finished", (m) => onGameFinished(JSON.parse(m.data)));
    source.addEventListener("entrant_withdrew", (m) => onWithdrew(JSON.parse(m.data)));
    source.addEventListener("tournament_over", (m) => {
      onOver(JSON.parse(m.data));
      stop("finished");
    });
    source.addEventListener("error", (m) => {
      if (m.data) {
        R.replace(connection, `reconnecting (${JSON.parse(m.data).error})`);
        return; // the gateway ends the stream: EventSource resumes from its last id by itself
      }
      if (state.final) return;
      R.replace(connection, "reconnecting…");
      if (source.readyState === EventSource.CLOSED) setTimeout(follow, 2000); // refused outright: start afresh
    });
  }

  /* The tournament once, before the stream: an unknown one stops here, with the gateway's line. */
  async function loadOnce() {
    const r = await R.api("GET", base);
    if (!r.ok) {
      $("tournament").dataset.status = "error";
      R.replace($("connection"));
      R.replace($("status"), r.status === 404 ? `${r.json.error}: there is no such tournament on this gateway (the lobby lists them).` : r.json.error || `error ${r.status}`);
      return false;
    }
    state.show = r.json;
    renderShow();
    return true;
  }

  (async () => {
    if (await loadOnce()) follow();
  })();
})();
