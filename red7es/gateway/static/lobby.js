/* The lobby (/): games with free seats, live games, finished games and tournaments, from
   the gateway's lists; and a form that creates a game against a bot (POST /api/games),
   joined at creation with a key made in this browser. */
"use strict";

(() => {
  const R = Red7;
  const $ = (id) => document.getElementById(id);

  function variantText(variant) {
    if (!variant || !variant.players) return "";
    const flags = ["scoring", "draw", "actions"].filter((f) => variant[f]).join("+") || "basic";
    const time = R.timeControlText(variant);
    return `${variant.players} players, ${flags}${time ? `, ${time}` : ""}`;
  }

  function seatText(seat) {
    if (seat.kind === "bot") return `${seat.name} (${seat.bot} bot)`;
    return seat.joined ? seat.name : `${seat.name} (open)`;
  }

  function gameItem(g) {
    let what = g.seats.map(seatText).join(", ");
    if (g.status === "over" && g.winners && !g.winners.length) what += ` · ${g.reason === "aborted" ? "aborted" : "no winner"}`;
    else if (g.status === "over" && g.winners) what += ` · won by ${g.winners.map((s) => g.seats[s].name).join(" and ")}`;
    if (g.status === "broken" || g.status === "unreadable") what += ` · ${g.status}`;
    return R.el(
      "li",
      { "data-game": g.game },
      R.el("a", { href: `/g/${encodeURIComponent(g.game)}` }, g.game),
      " ",
      R.el("span", { class: "dim" }, variantText(g.variant)),
      " · ",
      what,
    );
  }

  function fill(id, items, empty) {
    R.replace($(id), ...(items.length ? items : [R.el("li", { class: "dim" }, empty)]));
  }

  async function loadGames() {
    const r = await R.api("GET", "/api/games?limit=100");
    if (!r.ok) {
      fill("open", [], r.json.error || `error ${r.status}`);
      return;
    }
    const open = [];
    const live = [];
    const over = [];
    for (const g of r.json) {
      const free = g.seats.some((s) => s.kind === "person" && !s.joined);
      if (g.status === "over" || g.status === "broken" || g.status === "unreadable") over.push(gameItem(g));
      else if (free) open.push(gameItem(g));
      else live.push(gameItem(g));
    }
    fill("open", open, "No game has a free seat.");
    fill("live", live, "No game is being played.");
    fill("over", over, "No game has finished yet.");
  }

  async function loadTournaments() {
    const r = await R.api("GET", "/api/tournaments");
    if (r.status === 404) {
      fill("tournaments", [], "This gateway does not list tournaments yet.");
      return;
    }
    if (!r.ok || !Array.isArray(r.json)) {
      fill("tournaments", [], (r.json && r.json.error) || `error ${r.status}`);
      return;
    }
    const items = r.json.map((t) => {
      const id = t.tournament || "";
      const parts = [R.el("a", { href: `/t/${encodeURIComponent(id)}` }, t.name || id)];
      if (t.name && t.name !== id) parts.push(" ", R.el("span", { class: "dim" }, id));
      if (t.error) parts.push(` · ${t.error}`);
      else parts.push(" ", R.el("span", { class: "dim" }, t.format === "swiss" ? "Swiss" : "round robin"), ` · ${t.entrants} entrants · ${t.games_played} of ${t.games_total} games · ${t.status}`);
      return R.el("li", { "data-tournament": id }, ...parts);
    });
    fill("tournaments", items, "No tournament yet.");
  }

  function refresh() {
    loadGames();
    loadTournaments();
  }

  async function create(event) {
    event.preventDefault();
    const form = event.target;
    const say = (text) => R.replace($("new-message"), text);
    if (!R.canSign()) {
      say("Playing needs WebCrypto, which browsers give only to HTTPS pages (or http://127.0.0.1): see docs/web.md.");
      return;
    }
    const button = $("create");
    button.disabled = true;
    try {
      const token = await R.newToken();
      const key = await R.keyOf(token);
      const bot = $("bot").value;
      const body = {
        players: [{ name: $("name").value.trim(), key: key.publicKey }, { name: bot, bot }],
        scoring: form.elements.namedItem("scoring").checked,
        draw: form.elements.namedItem("draw").checked,
        actions: form.elements.namedItem("actions").checked,
        rounds: 1,
        target: null,
        id: null,
      };
      // "clock:5m+5s" or "turn_time:30s" (docs/gateway.md, Create a game); an empty text
      // after the colon is the player's own, from the text field: the gateway checks it
      const [field, preset] = $("time").value.split(":");
      if (field) body[field] = preset || $("time-text").value.trim();
      const r = await R.api("POST", "/api/games", body);
      if (r.status === 404 || r.status === 405) {
        say("Creating games is not available on this gateway: ask its operator (red7 new), then open the game's table here.");
        return;
      }
      if (!r.ok) {
        say(r.json.error || `error ${r.status}`);
        return;
      }
      localStorage.setItem(R.storeKey(r.json.game, 0), token);
      location.assign(`/g/${encodeURIComponent(r.json.game)}`);
    } finally {
      button.disabled = false;
    }
  }

  $("new-game").addEventListener("submit", create);
  $("time").addEventListener("change", () => {
    const own = /:$/.test($("time").value);
    $("time-own").hidden = !own;
    $("time-text").required = own;
  });
  $("refresh").addEventListener("click", refresh);
  refresh();
  setInterval(() => document.visibilityState === "visible" && loadGames(), 15000);
})();
