// The table of 56 drawn in the page: seats around it, hands face up, the cards of the trick in play.
// Shared by the replay viewer (replay.js) and the live view (live.js). Every name is set as text.
"use strict";
const Cards = (() => {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANKS = { J: "J", 9: "9", A: "A", T: "10", K: "K", Q: "Q", 8: "8", 7: "7" };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // One card, face up: its notation in data-card (the tests read it), rank and suit symbol shown.
  function card(text) {
    const node = el("span", "card suit-" + text.slice(-1));
    node.dataset.card = text;
    node.textContent = (RANKS[text.slice(0, -1)] || text.slice(0, -1)) + (SUITS[text.slice(-1)] || text.slice(-1));
    node.title = text;
    return node;
  }

  // Where seat `seat` of `players` sits: seat 0 at the bottom, the others around clockwise.
  function position(seat, players) {
    const angle = Math.PI / 2 + (2 * Math.PI * seat) / players;
    return { left: 50 + 40 * Math.cos(angle), top: 50 + 40 * Math.sin(angle) };
  }

  // Build the empty table once: a box per seat and the middle.
  function build(container, seats, teams) {
    container.textContent = "";
    container.classList.add("players-" + seats.length);
    const boxes = seats.map((name, seat) => {
      const box = el("div", "seat team-" + (teams ? teams[seat] : seat % 2));
      box.dataset.seat = String(seat);
      const where = position(seat, seats.length);
      box.style.left = where.left + "%";
      box.style.top = where.top + "%";
      const label = el("div", "seat-name");
      label.append(el("span", "seat-number", String(seat)), " ", el("span", "name", name));
      const hand = el("div", "hand");
      const played = el("div", "played");
      box.append(label, hand, played);
      container.append(box);
      return { box, hand, played };
    });
    const middle = el("div", "middle");
    container.append(middle);
    return { boxes, middle };
  }

  // Show each seat's hand (null: the seat is out of this deal; undefined: hidden) and the trick.
  function show(table, hands, trick, winner, dealer, toAct) {
    table.boxes.forEach((seat, index) => {
      seat.hand.textContent = "";
      const hand = hands[index];
      if (hand === null) seat.hand.append(el("span", "out", "out"));
      else if (hand === undefined) seat.hand.append(el("span", "hidden", "hidden"));
      else hand.forEach((text) => seat.hand.append(card(text)));
      seat.played.textContent = "";
      seat.box.classList.toggle("winner", winner === index);
      seat.box.classList.toggle("dealer", dealer === index);
      seat.box.classList.toggle("to-act", toAct === index);
    });
    trick.forEach((play) => table.boxes[play.seat].played.append(card(play.card)));
  }

  return { el, card, build, show };
})();
