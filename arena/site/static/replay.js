// The replay viewer: a stored match step by step (each call, each card, each deal's result), with the
// back / play / step buttons, the arrow keys and the space bar, and a link to every step (#deal-3-trick-7).
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const table = Cards.build(document.getElementById("table"), data.seats, data.teams);
  const auction = document.getElementById("auction");
  const score = document.getElementById("score");
  const label = document.getElementById("step-label");
  const link = document.getElementById("step-link");
  const select = document.getElementById("deal-select");
  const seatName = (seat) => `seat ${seat} (${data.seats[seat]})`;

  const steps = [];
  const index = {};
  data.deals.forEach((deal, d) => {
    const n = deal.number;
    const calls = deal.calls.length;
    const faults = data.faults.filter((fault) => fault.deal_number === n);
    index[`deal-${n}`] = steps.length;
    steps.push({ d, calls: 0, cards: 0, id: `deal-${n}`, label: `Deal ${n}, dealt by ${seatName(deal.dealer)}` });
    deal.calls.forEach((made, k) => {
      steps.push({ d, calls: k + 1, cards: 0, id: `deal-${n}-call-${k + 1}`, label: `${seatName(made.seat)} calls ${made.call}` });
    });
    let count = 0;
    deal.tricks.forEach((trick, t) => {
      trick.plays.forEach((play, c) => {
        count += 1;
        const last = c === trick.plays.length - 1 && trick.winner !== null;
        const won = last ? `; trick ${t + 1} to ${seatName(trick.winner)} (${trick.points} points)` : "";
        const card = `deal-${n}-trick-${t + 1}-card-${c + 1}`;
        // The step that completes a trick is linked as the trick itself: #deal-3-trick-7.
        const id = last ? `deal-${n}-trick-${t + 1}` : card;
        index[card] = steps.length;
        steps.push({ d, calls, cards: count, trick: t, inTrick: c + 1, id, label: `${seatName(play.seat)} plays ${play.card}${won}` });
      });
    });
    const faultText = faults.map((fault) => `fault: ${seatName(fault.seat)} ${fault.cause}${fault.substituted ? " (a random move played instead)" : ""}`).join("; ");
    if (deal.result) {
      const result = deal.result;
      const contract = result.contract.call ? `${result.contract.call} by seat ${result.contract.bidder}` : "no bid";
      steps.push({ d, calls, cards: count, end: true, id: `deal-${n}-result`, faults: faultText, label: `Deal ${n} over: ${contract} ${result.made ? "made" : "lost"}; points ${result.points.join(" : ")}; tables ${result.tables.join(" : ")}` });
    } else if (faultText) {
      steps[steps.length - 1].faults = faultText;
    }
    const option = Cards.el("option", "", `deal ${n}`);
    option.value = `deal-${n}`;
    select.append(option);
  });
  steps.forEach((step, i) => { index[step.id] = index[step.id] ?? i; });

  let current = 0;
  let timer = null;

  function render() {
    const step = steps[current];
    const deal = data.deals[step.d];
    const plays = deal.tricks.flatMap((trick) => trick.plays).slice(0, step.cards);
    const hands = deal.hands.map((hand, seat) => {
      if (hand === null) return null;
      const left = hand.slice();
      plays.filter((play) => play.seat === seat).forEach((play) => left.splice(left.indexOf(play.card), 1));
      return left;
    });
    let trick = [];
    let winner = null;
    if (!step.end && step.trick !== undefined) {
      const shown = deal.tricks[step.trick];
      trick = shown.plays.slice(0, step.inTrick);
      if (step.inTrick === shown.plays.length) winner = shown.winner;
    }
    Cards.show(table, hands, trick, winner, deal.dealer, null);
    auction.textContent = "";
    deal.calls.slice(0, step.calls).forEach((made) => auction.append(Cards.el("li", "", `${data.seats[made.seat]}: ${made.call}`)));
    score.textContent = "";
    const before = step.d > 0 && data.deals[step.d - 1].result ? data.deals[step.d - 1].result.tables : null;
    if (before) score.append(Cards.el("p", "", `tables before this deal: ${before.join(" : ")}`));
    if (step.end) {
      score.append(Cards.el("p", "", `points: ${deal.result.points.join(" : ")}`));
      score.append(Cards.el("p", "", `tables: ${deal.result.tables.join(" : ")}`));
    }
    label.textContent = `${step.label}${step.faults ? " ⚠ " + step.faults : ""} (step ${current + 1} of ${steps.length})`;
    label.classList.toggle("fault", Boolean(step.faults));
    link.href = "#" + step.id;
    link.dataset.step = step.id;
    select.value = `deal-${deal.number}`;
    if (location.hash !== "#" + step.id) history.replaceState(null, "", "#" + step.id);
  }

  function go(to) {
    current = Math.max(0, Math.min(steps.length - 1, to));
    render();
  }

  function toggle() {
    const button = document.getElementById("play");
    if (timer) {
      clearInterval(timer);
      timer = null;
      button.textContent = "▶ play";
      return;
    }
    button.textContent = "❚❚ pause";
    timer = setInterval(() => {
      if (current >= steps.length - 1) toggle();
      else go(current + 1);
    }, 700);
  }

  function fromHash() {
    const wanted = index[location.hash.slice(1)];
    if (wanted !== undefined && wanted !== current) go(wanted);
  }

  document.getElementById("back").addEventListener("click", () => go(current - 1));
  document.getElementById("step").addEventListener("click", () => go(current + 1));
  document.getElementById("play").addEventListener("click", toggle);
  select.addEventListener("change", () => go(index[select.value]));
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement) return;
    if (event.key === "ArrowRight") go(current + 1);
    else if (event.key === "ArrowLeft") go(current - 1);
    else if (event.key === " ") toggle();
    else return;
    event.preventDefault();
  });
  const start = index[location.hash.slice(1)];
  go(start === undefined ? 0 : start);
})();
