// What fills the page: an element by id, tables, cards of figures, the notes under a table and the
// charts (Chart.js, made once then updated in place). Everything is set as text, never as HTML.

import { BLANK } from "./format.js";
import { state } from "./state.js";

export const $ = (id) => document.getElementById(id);

/**
 * Fills a table: `columns` are [key, label, format?]; each row gets `data-key` (and is clickable
 * when `onClick` is given). An empty list shows one muted row.
 */
export function fillTable(table, columns, rows, { key, onClick, empty = "nothing yet" } = {}) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const [, label] of columns) {
    const th = document.createElement("th");
    th.textContent = label;
    head.append(th);
  }
  const body = table.createTBody();
  if (rows.length === 0) {
    const cell = body.insertRow().insertCell();
    cell.colSpan = columns.length;
    cell.className = "muted";
    cell.textContent = empty;
  }
  for (const row of rows) {
    const tr = body.insertRow();
    if (key) tr.dataset.key = key(row);
    for (const [name, , format] of columns) {
      const cell = tr.insertCell();
      const value = format ? format(row[name], row) : row[name];
      cell.textContent = value === undefined || value === null ? "" : String(value);
      cell.dataset.column = name;
      if (name === "outcome") cell.className = `outcome-${value}`;
    }
    if (onClick) tr.addEventListener("click", () => onClick(row));
  }
}

/** Cards of figures: [{ id, label, value, bad }]; each card is `data-card=<id>`. */
export function fillCards(container, cards) {
  container.replaceChildren(
    ...cards.map(({ id, label, value, bad }) => {
      const card = document.createElement("div");
      card.className = `card${bad && value > 0 ? " bad" : ""}`;
      card.dataset.card = id;
      const v = document.createElement("div");
      v.className = "value";
      v.textContent = String(value);
      const l = document.createElement("div");
      l.className = "label";
      l.textContent = label;
      card.append(v, l);
      return card;
    }),
  );
}

/**
 * The notes under a table (`query activity`'s `blank`): why a figure shows "—", when its day
 * closes and the command to run, each a line; none hides the box.
 */
export function fillNotes(box, notes = []) {
  box.hidden = notes.length === 0;
  box.replaceChildren(
    ...notes.map((n) => {
      const line = document.createElement("div");
      line.dataset.from = n.from;
      line.textContent = `${BLANK} ${n.text}`;
      if (n.run) {
        const code = document.createElement("code");
        code.textContent = n.run;
        line.append(" ", code);
      }
      return line;
    }),
  );
}

/** A chart on a canvas, made once and then updated in place. */
export function chart(id, config) {
  const existing = state.charts[id];
  if (existing) {
    existing.data.labels = config.data.labels;
    existing.data.datasets.forEach((d, i) => {
      d.data = config.data.datasets[i].data;
      d.label = config.data.datasets[i].label;
    });
    existing.update("none");
    return existing;
  }
  state.charts[id] = new window.Chart($(id), {
    ...config,
    options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options },
  });
  return state.charts[id];
}
