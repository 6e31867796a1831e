// The tree viewer of `depparse serve` (served with the page; no library, nothing from
// elsewhere).  It sends the text box to /parse and shows what comes back: the server draws
// the trees (depparse/viewer/svg.py, the drawing `depparse show` makes too) and escapes
// every text in them; everything else is set here as text, never as markup.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  let conllu = "";

  function show(id, on) { $(id).hidden = !on; }

  function fail(message) {
    $("error").textContent = message;
    show("error", true);
  }

  async function loadModels() {
    try {
      const r = await fetch("models");
      const answer = await r.json();
      const select = $("model");
      for (const [name, steps] of Object.entries(answer.models)) {
        const option = document.createElement("option");
        option.value = name;
        option.textContent = `${name} (${steps.join(", ")})`;
        option.selected = name === answer.default_model;
        select.appendChild(option);
      }
    } catch (e) {
      fail(`The server cannot be reached: ${e.message}`);
    }
  }

  function looksLikeConllu(text) {
    return /^\d+(-\d+)?\t[^\t\n]*\t/m.test(text);
  }

  function render(answer) {
    const trees = $("trees");
    trees.replaceChildren();
    for (const s of answer.sentences) {
      trees.insertAdjacentHTML("beforeend", s.html);  // markup made and escaped by the server
    }
    const n = answer.sentences.length;
    const proved = answer.sentences.filter((s) => s.optimal).length;
    $("summary").textContent = n === 0 ? "No sentence in the input." :
      `${n} sentence${n === 1 ? "" : "s"}, ${answer.words} words, ${proved} of ${n} proved ` +
      `optimal; ${answer.seconds} s on the server (model ${answer.model}).`;
    show("summary", true);
    const list = $("warnings");
    list.replaceChildren();
    for (const w of answer.warnings || []) {
      const item = document.createElement("li");
      item.textContent = `warning: ${w}`;
      list.appendChild(item);
    }
    show("warnings", list.childElementCount > 0);
    conllu = answer.result;
    $("conllu").value = conllu;
    show("output", n > 0);
  }

  async function parse(event) {
    event.preventDefault();
    show("error", false);
    const data = $("input").value;
    if (!data.trim()) {
      fail("Type a sentence first.");
      return;
    }
    const params = new URLSearchParams();
    params.set("data", data);
    if ($("model").value) params.set("model", $("model").value);
    const format = document.querySelector("input[name=format]:checked").value;
    if (format === "text") params.set("tokenizer", "");
    else params.set("input", "conllu");
    if ($("time-limit").value) params.set("time_limit", $("time-limit").value);
    $("parse").disabled = true;
    show("busy", true);
    try {
      const r = await fetch("parse", { method: "POST", body: params });
      const text = await r.text();
      if (!r.ok) {
        fail(text.trim() || `${r.status} ${r.statusText}`);
        return;
      }
      render(JSON.parse(text));
    } catch (e) {
      fail(`The server cannot be reached: ${e.message}`);
    } finally {
      $("parse").disabled = false;
      show("busy", false);
    }
  }

  async function copy() {
    try {
      await navigator.clipboard.writeText(conllu);
    } catch (e) {
      $("conllu").select();
      document.execCommand("copy");
    }
    $("copied").textContent = "copied";
    setTimeout(() => { $("copied").textContent = ""; }, 1500);
  }

  function download() {
    const url = URL.createObjectURL(new Blob([conllu], { type: "text/plain;charset=utf-8" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = "parsed.conllu";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("form").addEventListener("submit", parse);
    $("copy").addEventListener("click", copy);
    $("download").addEventListener("click", download);
    $("input").addEventListener("paste", () => setTimeout(() => {
      const conll = looksLikeConllu($("input").value);
      document.querySelector(`input[name=format][value=${conll ? "conllu" : "text"}]`)
        .checked = true;
    }, 0));
    loadModels();
  });
})();
