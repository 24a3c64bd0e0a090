(function () {
  // The label controls (src/report/labels.rs): a person's pass/fail on each judged answer,
  // downloaded as the JSONL `aptitude judge` reads (src/verdict/labels.rs).
  var bar = document.getElementById("labelbar");
  if (!bar) return;
  bar.hidden = false;
  document.documentElement.classList.add("labelling");
  var rater = document.getElementById("rater");
  var count = document.getElementById("labels-count");
  var message = document.getElementById("labels-message");
  var store = "aptitude-labels:" + location.pathname;
  var labels = {};
  try {
    var saved = JSON.parse(localStorage.getItem(store) || "{}");
    if (saved && typeof saved.labels === "object" && saved.labels) labels = saved.labels;
    if (saved && typeof saved.rater === "string") rater.value = saved.rater;
  } catch (e) { /* no storage for this page (or not JSON): labels live while it is open */ }
  function save() {
    var n = Object.keys(labels).length;
    count.textContent = n + (n === 1 ? " label" : " labels");
    try { localStorage.setItem(store, JSON.stringify({ rater: rater.value, labels: labels })); } catch (e) { /* as above */ }
  }
  function ids(fs) {
    var answer = JSON.parse(fs.closest("section.verdicts").getAttribute("data-answer"));
    var review = JSON.parse(fs.getAttribute("data-review"));
    return { answer: answer, review: review, key: JSON.stringify([answer.test, review, answer.answer_sha256]) };
  }
  function read(fs) {
    var id = ids(fs);
    var chosen = fs.querySelector("input[type=radio]:checked");
    var verdict = chosen ? chosen.value : "";
    if (verdict !== "pass" && verdict !== "fail") {
      delete labels[id.key];
    } else {
      var old = labels[id.key];
      labels[id.key] = { test: id.answer.test, review: id.review, answer: id.answer.answer,
        answer_sha256: id.answer.answer_sha256, verdict: verdict,
        date: old && old.verdict === verdict ? old.date : new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        note: fs.querySelector("input.note").value.trim() };
    }
    save();
    restore(true);
  }
  // Puts the kept labels into controls: new ones (details unpacked, the page reloaded), or
  // every one after a change (a repeated test's identical answers share a label).
  function restore(all) {
    document.querySelectorAll(all ? "fieldset.verdict" : "fieldset.verdict:not([data-shown])").forEach(function (fs) {
      fs.setAttribute("data-shown", "");
      var l = labels[ids(fs).key];
      var radio = fs.querySelector('input[value="' + (l && (l.verdict === "pass" || l.verdict === "fail") ? l.verdict : "none") + '"]');
      if (radio && !radio.checked) radio.checked = true;
      var note = fs.querySelector("input.note");
      if (l && note !== document.activeElement) note.value = l.note || "";
    });
  }
  document.addEventListener("change", function (e) {
    var fs = e.target.closest && e.target.closest("fieldset.verdict");
    if (fs) read(fs);
  });
  document.addEventListener("input", function (e) {
    if (e.target.matches && e.target.matches("fieldset.verdict input.note")) read(e.target.closest("fieldset.verdict"));
  });
  rater.addEventListener("input", save);
  new MutationObserver(function () { restore(false); }).observe(document.querySelector("main"), { childList: true, subtree: true });
  restore(false);
  save();
  document.getElementById("labels-download").addEventListener("click", function () {
    var who = rater.value.trim();
    if (!who) { message.textContent = "Type your name as rater first."; rater.focus(); return; }
    var lines = Object.keys(labels).map(function (k) {
      var l = labels[k];
      var line = { test: l.test, review: l.review, answer: l.answer, answer_sha256: l.answer_sha256,
        verdict: l.verdict, rater: who, date: l.date };
      if (l.note) line.note = l.note;
      return JSON.stringify(line) + "\n";
    });
    if (!lines.length) { message.textContent = "No labels yet: choose pass or fail under an answer."; return; }
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob(lines, { type: "application/x-ndjson" }));
    a.download = "labels-" + who.replace(/[^A-Za-z0-9_.-]+/g, "_") + ".jsonl";
    document.body.appendChild(a);
    a.click();
    a.remove();
    message.textContent = lines.length + (lines.length === 1 ? " label" : " labels") +
      " downloaded: put the file in .aptitude/labels/ and commit it.";
  });
})();
