// The live view: a match in play drawn as its public events arrive (server-sent events). It knows only
// what the stream says: calls and cards as they are made, each deal's hands once that deal has ended.
"use strict";
(() => {
  const config = JSON.parse(document.getElementById("live-data").textContent);
  const status = document.getElementById("live-status");
  const auction = document.getElementById("auction");
  const score = document.getElementById("score");
  let table = null;
  let seats = [];
  let inPlay = [];
  let dealer = null;
  let trick = [];
  let moves = 0;

  function handleEvent(event) {
    moves += 1;
    if (event.type === "match_start") {
      seats = event.seats;
      table = Cards.build(document.getElementById("table"), seats, null);
      inPlay = seats.map((_, seat) => seat);
      status.textContent = `${event.players} players, ${event.ruleset}: the match has started`;
    } else if (!table) {
      return;
    } else if (event.type === "deal_start") {
      inPlay = event.seats;
      dealer = event.dealer;
      trick = [];
      auction.textContent = "";
      status.textContent = `Deal ${event.deal}, dealt by seat ${event.dealer} (${seats[event.dealer]})`;
    } else if (event.type === "call") {
      auction.append(Cards.el("li", "", `${seats[event.seat]}: ${event.call}`));
      status.textContent = `${seats[event.seat]} calls ${event.call}`;
    } else if (event.type === "card") {
      if (trick.length === inPlay.length) trick = [];
      trick.push({ seat: event.seat, card: event.card });
      status.textContent = `${seats[event.seat]} plays ${event.card}`;
    } else if (event.type === "deal_end") {
      const result = event.result;
      const line = Cards.el("p", "deal-result", `Deal ${event.deal}: ${result.contract.call || "no bid"} ${result.made ? "made" : "lost"}; points ${result.points.join(" : ")}; tables ${result.tables.join(" : ")}`);
      score.prepend(line);
      status.textContent = `Deal ${event.deal} over; the hands as dealt:`;
      Cards.show(table, event.hands, [], null, dealer, null);
      return;
    } else if (event.type === "fault") {
      status.textContent = `fault: ${seats[event.seat]} ${event.cause}`;
    } else if (event.type === "match_end") {
      status.textContent = `The match is over (${event.reason}); ranking by team: ${event.ranking.join(", ")}`;
    }
    const hidden = seats.map((_, seat) => (inPlay.includes(seat) ? undefined : null));
    Cards.show(table, hidden, trick, null, dealer, null);
  }

  const source = new EventSource(config.events);
  source.onmessage = (message) => handleEvent(JSON.parse(message.data));
  source.addEventListener("end", () => {
    source.close();
    const done = Cards.el("p", "", "The match is stored: ");
    const link = Cards.el("a", "", "watch its replay");
    link.href = config.replay;
    done.append(link, " (once its set is over).");
    score.prepend(done);
    document.body.dataset.liveEnded = "true";
  });
  source.onerror = () => { if (source.readyState === EventSource.CLOSED) status.textContent += " (disconnected)"; };
  window.liveMoves = () => moves;
})();
