// The babytris analysis board's page: a plain ES module, no build step, no other host.
// It draws and keeps the game tree; every legal move, value, regret and piece comes from the
// JSON API (docs/board.md). The board's drawing mirrors babytris/game/svg.py's geometry (a cell
// is its grid square with the colour inset by one pixel; a filled row the landed piece completes
// is struck through), in the palette /api/game sends: one drawing, one palette.

const SVG = "http://www.w3.org/2000/svg";
const CLEARED_BAR = 0.14; // game/svg.py's bar through a cleared row, in cells
const zoom = () => (state.game.height > 10 ? 1 : 2); // small boards shown at twice the library's pixels (its viewBox)
const MARK_CLASS = { "?!": "mark-inaccuracy", "?": "mark-mistake", "??": "mark-blunder" };

const state = {
  game: null, // /api/game
  root: null, // the tree of positions: {pos, analysis, parent, children, move, came, points, score, ply, last}
  node: null, // where the board stands
  selected: 0, // the highlighted row of the moves' table
  editing: null, // the editor's board bits (a BigInt) while editing, else null
};

const $ = (id) => document.getElementById(id);

// ---- the API (or, in a saved file, the answers it gave) ----

const saved = window.BABYTRIS_SAVED || null;
const answers = new Map(saved ? Object.entries(saved.answers) : []);
let pending = 0; // requests under way

async function api(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const url = query.toString() ? `${path}?${query}` : path;
  if (answers.has(url)) return answers.get(url);
  if (saved) throw new Error("this saved file holds only the positions its game visited");
  pending += 1;
  $("status").hidden = false; // (a named opponent's first use solves it: seconds on a big game)
  let response, body;
  try {
    response = await fetch(url);
    body = await response.json();
  } finally {
    pending -= 1;
    $("status").hidden = pending === 0;
  }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  answers.set(url, body);
  return body;
}

function showError(err) {
  const line = $("error");
  line.hidden = !err;
  line.textContent = err ? String(err.message || err) : "";
}

async function attempt(work) {
  try {
    showError(null);
    await work();
  } catch (err) {
    showError(err);
  }
}

// ---- drawing (game/svg.py's geometry) ----

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function parseRows(pos) {
  // The bits of a position text's rows field (top first, rows left out at the top empty), as a BigInt.
  const { width, height } = state.game;
  const rows = pos.split(";")[0].split("/");
  let bits = 0n;
  rows.forEach((row, i) => {
    const r = rows.length - 1 - i; // (row 0 at the bottom)
    [...row].forEach((ch, c) => {
      if (ch === "#") bits |= 1n << BigInt(r * width + c);
    });
  });
  if (rows.length > height) throw new Error("too many rows");
  return bits;
}

function rowsText(bits) {
  const { width, height } = state.game;
  const rows = [];
  for (let r = height - 1; r >= 0; r--) {
    let row = "";
    for (let c = 0; c < width; c++) row += (bits >> BigInt(r * width + c)) & 1n ? "#" : ".";
    rows.push(row);
  }
  while (rows.length > 1 && !rows[0].includes("#")) rows.shift();
  return rows.join("/");
}

function cell(svg, x, y, s, colour, palette) {
  el("rect", { x, y, width: s, height: s, fill: palette.grid }, svg);
  return el("rect", { x: x + 1, y: y + 1, width: s - 1, height: s - 1, fill: palette[colour], class: "cell" }, svg);
}

function drawBoard(svg, bits, landed = []) {
  // The board at cell size game.cell, the landed cells in the piece colour, a bar through each row they fill.
  const { width: w, height: h, cell: s, palette } = state.game;
  svg.replaceChildren();
  svg.setAttribute("width", zoom() * w * s);
  svg.setAttribute("height", zoom() * h * s);
  svg.setAttribute("viewBox", `0 0 ${w * s} ${h * s}`);
  el("rect", { x: 0, y: 0, width: w * s, height: h * s, fill: palette.background }, svg);
  const ghost = new Set(landed.map(([c, r]) => r * w + c));
  for (let row = 0; row < h; row++) {
    const top = (h - 1 - row) * s;
    let full = ghost.size > 0;
    for (let col = 0; col < w; col++) {
      const i = row * w + col;
      const filled = (bits >> BigInt(i)) & 1n;
      const colour = ghost.has(i) ? "piece" : filled ? "filled" : "empty";
      if (!ghost.has(i) && !filled) full = false;
      const square = cell(svg, col * s, top, s, colour, palette);
      square.dataset.col = col;
      square.dataset.row = row;
    }
    if (full) {
      const bar = Math.max(1, Math.round(CLEARED_BAR * s));
      el("rect", { x: 0, y: top + Math.floor((s - bar) / 2), width: w * s, height: bar, fill: palette.cleared }, svg);
    }
  }
}

function pieceFigure(name, caption) {
  // A piece drawn in the piece colour at half a cell, with its caption (to place, next, held).
  const { cell: big, palette } = state.game;
  const s = Math.max(4, Math.round(big / 2));
  const figure = document.createElement("figure");
  const svg = el("svg", {}, figure);
  const piece = state.game.pieces.find((p) => p.name === name);
  const cells = piece ? piece.cells : [];
  const wide = Math.max(1, ...cells.map(([x]) => x + 1));
  const tall = Math.max(1, ...cells.map(([, y]) => y + 1));
  svg.setAttribute("width", wide * s + 2);
  svg.setAttribute("height", tall * s + 2);
  el("rect", { x: 0, y: 0, width: wide * s + 2, height: tall * s + 2, fill: palette.background }, svg);
  for (const [x, y] of cells) cell(svg, 1 + x * s, 1 + (tall - 1 - y) * s, s, "piece", palette);
  const text = document.createElement("figcaption");
  text.textContent = `${caption}${name ? " " + name : " -"}`;
  figure.appendChild(text);
  return figure;
}

// ---- the game tree ----

function newNode(pos, analysis, parent = null, move = null, came = null, points = 0) {
  return {
    pos, analysis, parent, move, came, points,
    children: [],
    score: (parent ? parent.score : 0) + points,
    ply: parent ? parent.ply + 1 : 0,
    last: null, // the child the arrow right goes to
  };
}

function pathTo(node) {
  const path = [];
  for (let n = node; n; n = n.parent) path.unshift(n);
  return path;
}

function lineThrough(node) {
  // The root to node, then on along each node's last visited (else first) child.
  const line = pathTo(node);
  for (let n = node; n.children.length; ) {
    n = n.last || n.children[0];
    line.push(n);
  }
  return line;
}

function params() {
  const opponent = $("opponent").value;
  return {
    opponent: opponent === "hand" ? null : opponent,
    piece: opponent === "hand" ? $("hand").value : null,
    seed: $("seed").value || "0",
    compare: $("compare").value,
  };
}

async function play(moveId) {
  const node = state.node;
  const p = params();
  const existing = node.children.find((c) => c.move === moveId && (p.piece === null || c.came === p.piece));
  if (existing && p.piece !== null) return goTo(existing);
  const body = await api("/api/play", {
    pos: node.pos, move: moveId, opponent: p.opponent, piece: p.piece, seed: p.seed, ply: node.ply, compare: p.compare,
  });
  let child = node.children.find((c) => c.move === moveId && c.came === body.came);
  if (!child) {
    child = newNode(body.position, body.analysis, node, moveId, body.came, body.points);
    node.children.push(child); // (a second child is a branch: the game before it stays)
  }
  goTo(child);
}

function goTo(node) {
  if (node.parent) node.parent.last = node;
  state.node = node;
  state.selected = 0;
  render();
}

async function analysisOf(pos) {
  const p = params();
  return api("/api/position", { pos, opponent: p.opponent, compare: p.compare });
}

async function startFrom(pos, moves = []) {
  // A new tree at pos, then the moves (ids with the piece that came: "L-3.I") played by hand.
  state.root = newNode(pos, await analysisOf(pos));
  state.node = state.root;
  try {
    for (const token of moves) {
      const [move, came] = token.split(".");
      const p = params();
      const body = await api("/api/play", { pos: state.node.pos, move, piece: came, ply: state.node.ply, compare: p.compare });
      const child = newNode(body.position, body.analysis, state.node, move, body.came, body.points);
      state.node.children.push(child);
      state.node.last = child;
      state.node = child;
    }
  } finally {
    render(); // (a move the URL names that is not legal stops the game there, with its reason shown)
  }
}

async function reanalyse() {
  // The model or the compared player changed: every visited position asks again.
  const visit = async (n) => {
    n.analysis = await analysisOf(n.pos);
    for (const c of n.children) await visit(c);
  };
  await visit(state.root);
  render();
}

// ---- rendering ----

function fmt(x) {
  return Number(x).toFixed(3);
}

function render() {
  const node = state.node;
  const a = node.analysis;
  drawBoard($("board"), state.editing !== null ? state.editing : parseRows(node.pos));
  $("board").dataset.position = node.pos;
  renderPanel(node);
  renderMoves(a);
  renderMoveList();
  renderChart();
  writeUrl();
}

function renderPanel(node) {
  const fields = node.pos.split(";");
  const panel = $("panel");
  panel.replaceChildren(pieceFigure(fields[1], "to place"));
  let k = 2;
  if (state.game.preview) for (const name of fields[k++].split(",")) panel.appendChild(pieceFigure(name, "next"));
  if (state.game.hold) {
    const held = fields[k++];
    panel.appendChild(pieceFigure(held === "-" ? "" : held.replace("!", ""), held.endsWith("!") ? "held (locked)" : "held"));
  }
  const a = node.analysis;
  const chances = a.chances && Object.entries(a.chances).map(([n, p]) => `${n} ${(100 * p).toFixed(0)}%`).join(", ");
  const who = $("opponent").value === "hand"
    ? `next piece: given by hand (drawn at random it would be ${chances})`
    : a.chances
    ? "next piece drawn: " + chances
    : `next piece: the ${$("opponent").value === "solution" ? `solution's own (${state.game.opponent})` : $("opponent").value} opponent's answer (column "then")`;
  $("summary").textContent =
    (state.game.estimate ? `evaluation ${fmt(a.value)} (an estimate, not points), ` : `value ${fmt(a.value)} (${state.game.counts}, exact), `) +
    `score ${node.score}, placement ${node.ply}` + (a.over ? " — game over: the piece fits nowhere" : "") + `. ${who}`;
}

function renderMoves(a) {
  const compare = $("compare").value;
  const head = ["", "move", "rotation", "column", state.game.estimate ? "evaluation" : "value", "regret"];
  if (compare) head.push(`value vs ${compare}`);
  if (a.moves.some((m) => m.answer)) head.push("then");
  $("moves").tHead.replaceChildren(row("th", head));
  const body = $("moves").tBodies[0];
  body.replaceChildren();
  a.moves.forEach((m, i) => {
    const cells = [m.mark, m.id + (m.loses ? " (loses)" : ""), m.rotation ?? "", m.column ?? "", fmt(m.value), fmt(m.regret)];
    if (compare) cells.push(fmt(m.compare));
    if (m.answer) cells.push(m.answer);
    const tr = row("td", cells);
    tr.dataset.move = m.id;
    if (m.mark) tr.classList.add(MARK_CLASS[m.mark]); // (the mark and the regret in its colour)
    tr.cells[1].className = "id";
    if (m.best) tr.classList.add("best");
    if (a.compare && a.compare.theirs === m.id) tr.classList.add("theirs");
    if (i === state.selected) tr.classList.add("selected");
    tr.addEventListener("mouseenter", () => ghost(m));
    tr.addEventListener("mouseleave", () => ghost(null));
    tr.addEventListener("click", () => attempt(() => play(m.id)));
    body.appendChild(tr);
  });
  const c = a.compare;
  $("comparison").textContent = !c
    ? ""
    : c.agree
      ? `The player solved against ${c.opponent} agrees (underlined: its move).`
      : `The player solved against ${c.opponent} plays ${c.theirs} (underlined): it costs ${fmt(c.theirs_costs_here)} ` +
        `here; this solution's move costs ${fmt(c.mine_costs_there)} under its model.`;
}

function row(tag, texts) {
  const tr = document.createElement("tr");
  for (const t of texts) {
    const td = document.createElement(tag);
    td.textContent = t;
    tr.appendChild(td);
  }
  return tr;
}

function ghost(move) {
  if (state.editing !== null) return;
  drawBoard($("board"), parseRows(state.node.pos), move ? move.cells : []);
}

function renderMoveList() {
  const list = $("movelist");
  list.replaceChildren();
  const line = lineThrough(state.node);
  for (const n of line.slice(1)) {
    const li = document.createElement("li");
    li.appendChild(moveLink(n));
    const others = n.parent.children.filter((c) => c !== n);
    for (const other of others) {
      const span = document.createElement("span");
      span.className = "branch";
      span.append("(", moveLink(other), ")");
      li.appendChild(span);
    }
    list.appendChild(li);
  }
}

function moveLink(n) {
  const link = document.createElement("a");
  const m = n.parent.analysis.moves.find((x) => x.id === n.move);
  link.textContent = `${n.move}${m && m.mark ? " " + m.mark : ""} → ${n.came}${n.points ? " +" + n.points : ""}`;
  link.dataset.ply = n.ply;
  if (n === state.node) link.classList.add("current");
  link.addEventListener("click", () => goTo(n));
  return link;
}

function renderChart() {
  // The value and the score (the points so far) over the game's line, a point per position; a click jumps there.
  const svg = $("chart");
  const W = 320, H = 160, pad = 18, left = 40; // (left: room for the scale's numbers)
  const line = lineThrough(state.node);
  const values = line.map((n) => n.analysis.value);
  const scores = line.map((n) => n.score);
  const top = Math.max(1, ...values, ...scores), bottom = Math.min(0, ...values, ...scores);
  const x = (i) => left + (line.length > 1 ? (i * (W - left - pad)) / (line.length - 1) : 0);
  const y = (v) => H - pad - ((v - bottom) * (H - 2 * pad)) / (top - bottom || 1);
  svg.replaceChildren();
  el("rect", { x: 0, y: 0, width: W, height: H, fill: state.game.palette.empty }, svg);
  const series = [
    [values, state.game.palette.piece, state.game.estimate ? "evaluation" : "value"],
    [scores, state.game.palette.filled, "score"],
  ];
  for (const v of new Set([top, bottom])) { // the scale: its top and bottom, in the values' units
    el("text", { x: left - 6, y: y(v) + 4, fill: "#a0a0b0", "font-size": 10, "text-anchor": "end", class: "scale" }, svg)
      .textContent = String(Number(v.toFixed(2)));
  }
  series.forEach(([ys, colour, name], k) => {
    el("polyline", { points: ys.map((v, i) => `${x(i)},${y(v)}`).join(" "), fill: "none", stroke: colour, "stroke-width": 2 }, svg);
    el("text", { x: left + k * 90, y: 12, fill: colour, "font-size": 11 }, svg).textContent = name;
  });
  line.forEach((n, i) => {
    const dot = el("circle", { cx: x(i), cy: y(values[i]), r: n === state.node ? 5 : 3, fill: state.game.palette.piece }, svg);
    dot.dataset.ply = n.ply;
    el("title", {}, dot).textContent = `placement ${n.ply}: ${series[0][2]} ${fmt(values[i])}, score ${scores[i]}`;
    dot.addEventListener("click", () => goTo(n));
  });
}

function writeUrl() {
  if (saved) return;
  const p = params();
  const moves = pathTo(state.node).slice(1).map((n) => `${n.move}.${n.came}`).join("_");
  const query = new URLSearchParams({ pos: state.root.pos });
  if (moves) query.set("moves", moves);
  for (const [k, v] of Object.entries({ opponent: $("opponent").value, seed: p.seed, compare: p.compare })) if (v) query.set(k, v);
  history.replaceState(null, "", `?${query}`);
}

// ---- the editor ----

function editorFields() {
  const fields = state.node.pos.split(";");
  const names = state.game.pieces.map((p) => p.name);
  const box = $("editor-fields");
  box.replaceChildren();
  const add = (label, id, value) => {
    const l = document.createElement("label");
    l.textContent = label + " ";
    const input = document.createElement("input");
    input.id = id;
    input.value = value;
    l.appendChild(input);
    box.appendChild(l);
  };
  let k = 1;
  add(`piece (${names.join(" ")})`, "edit-piece", fields[k++]);
  if (state.game.preview) add("queue (next first, joined by ,)", "edit-queue", fields[k++]);
  if (state.game.hold) add("held (- for none; ! after: locked)", "edit-hold", fields[k++]);
  if (state.game.bag) add("bag left (joined by ,)", "edit-bag", fields[k++]);
}

function editedText() {
  const parts = [rowsText(state.editing), $("edit-piece").value];
  for (const id of ["edit-queue", "edit-hold", "edit-bag"]) if ($(id)) parts.push($(id).value);
  return parts.join(";");
}

function toggleEditor() {
  const on = state.editing === null;
  state.editing = on ? parseRows(state.node.pos) : null;
  $("edit").setAttribute("aria-pressed", on);
  $("editor").hidden = !on;
  document.body.classList.toggle("editing", on);
  if (on) editorFields();
  render();
}

function editCell(event) {
  const target = event.target;
  if (state.editing === null || target.dataset.col === undefined) return;
  const i = BigInt(Number(target.dataset.row) * state.game.width + Number(target.dataset.col));
  state.editing ^= 1n << i;
  drawBoard($("board"), state.editing);
}

// ---- saving the game as one file ----

async function saveHtml() {
  const [page, js, css] = await Promise.all(["/", "/static/board.js", "/static/board.css"].map((u) => fetch(u).then((r) => r.text())));
  const data = { answers: Object.fromEntries(answers), tree: stored(state.root), at: pathTo(state.node).slice(1).map((n) => n.parent.children.indexOf(n)) };
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  const html = page
    .replace(/<link rel="stylesheet"[^>]*>/, () => `<style>${css}</style>`)
    .replace(/<script type="module" src="[^"]*"><\/script>/, () =>
      `<script>window.BABYTRIS_SAVED = ${json};</script>\n<script type="module">${js.replace(/<\/script/gi, "<\\/script")}</script>`);
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([html], { type: "text/html" }));
  link.download = "babytris-game.html";
  link.click();
  URL.revokeObjectURL(link.href);
}

function stored(n) {
  // A node and its children as the saved file keeps them (no parents: JSON holds no cycles).
  return { pos: n.pos, analysis: n.analysis, move: n.move, came: n.came, points: n.points, children: n.children.map(stored) };
}

function restored(data, parent = null) {
  const n = newNode(data.pos, data.analysis, parent, data.move, data.came, data.points);
  n.children = data.children.map((c) => restored(c, n));
  return n;
}

// ---- start ----

function keys(event) {
  const tag = event.target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || (tag === "BUTTON" && event.key === "Enter")) return; // (their own keys)
  const node = state.node;
  const moves = node.analysis.moves;
  if (event.key === "ArrowLeft" && node.parent) goTo(node.parent);
  else if (event.key === "ArrowRight" && node.children.length) goTo(node.last || node.children[0]);
  else if (event.key === "ArrowDown" && moves.length) (state.selected = (state.selected + 1) % moves.length), renderMoves(node.analysis), ghost(moves[state.selected]);
  else if (event.key === "ArrowUp" && moves.length) (state.selected = (state.selected + moves.length - 1) % moves.length), renderMoves(node.analysis), ghost(moves[state.selected]);
  else if (event.key === "Enter" && moves.length) attempt(() => play(moves[state.selected].id));
  else if (event.key === "Home") goTo(state.root);
  else return;
  event.preventDefault();
}

function fillSelect(select, options) {
  for (const [value, text] of options) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = text;
    select.appendChild(option);
  }
}

async function main() {
  state.game = await api("/api/game");
  const g = state.game;
  const url = new URLSearchParams(saved ? "" : location.search);
  $("rules").textContent = `${g.width}x${g.height}, pieces ${g.pieces.map((p) => p.name).join(" ")}` +
    `${g.preview ? `, preview ${g.preview}` : ""}${g.hold ? ", hold" : ""}${g.bag ? ", bag" : ""}` +
    (g.estimate
      ? ": too big to solve; Dellacherie's feature-based player, its evaluations are estimates (not points)"
      : `, discount ${g.discount}, solved against ${g.opponent}${g.result === "table" ? "" : ` (${g.result}: values on demand)`}`);
  fillSelect($("opponent"), [...g.opponents.map((o) => [o, o === "solution" ? `the solution's (${g.opponent})` : o]), ["hand", "by hand"]]);
  fillSelect($("hand"), g.pieces.map((p) => [p.name, p.name]));
  fillSelect($("compare"), g.compare.map((c) => [c, `the player solved against ${c}`]));
  $("marks").textContent = g.estimate ? "none here (an evaluation is not points)" : g.marks.map(([t, m]) => `${m} from ${t}`).join(", ");
  // (a solution solved against an opponent of its own values the moves as if that opponent gives the pieces: it does, unless told)
  if (g.opponents.includes("solution")) $("opponent").value = "solution";
  for (const [id, key] of [["opponent", "opponent"], ["seed", "seed"], ["compare", "compare"]]) if (url.get(key)) $(id).value = url.get(key);
  $("hand-label").hidden = $("opponent").value !== "hand";
  $("opponent").addEventListener("change", () => attempt(async () => {
    $("hand-label").hidden = $("opponent").value !== "hand";
    await reanalyse();
  }));
  $("compare").addEventListener("change", () => attempt(reanalyse));
  $("seed").addEventListener("change", () => writeUrl());
  $("new-game").addEventListener("click", () => attempt(async () => {
    const p = params();
    const start = await api("/api/start", { opponent: p.opponent, seed: p.seed });
    await startFrom(start.position);
  }));
  $("edit").addEventListener("click", toggleEditor);
  $("apply").addEventListener("click", () => attempt(async () => {
    const text = editedText();
    await analysisOf(text); // (a position no game reaches is refused here, with its reason)
    toggleEditor();
    await startFrom(text);
  }));
  $("save").addEventListener("click", () => attempt(saveHtml));
  $("board").addEventListener("click", editCell);
  document.addEventListener("keydown", keys);
  if (saved) {
    $("save").hidden = $("new-game").hidden = $("edit").hidden = true;
    state.root = state.node = restored(saved.tree);
    for (const k of saved.at) state.node = state.node.children[k];
    goTo(state.node);
  } else if (url.get("pos")) {
    await startFrom(url.get("pos"), url.get("moves") ? url.get("moves").split("_") : []);
  } else {
    const p = params();
    await startFrom((await api("/api/start", { opponent: p.opponent, seed: p.seed })).position);
  }
}

attempt(main).then(() => (document.body.dataset.ready = "true"));
