// Opened from disk (file://), the site's folder links and its search cannot work: say how to
// serve it instead.
if (window.location.protocol === "file:") {
  document.addEventListener("DOMContentLoaded", function () {
    var note = document.createElement("div");
    note.className = "admonition warning ls-served";
    note.innerHTML =
      '<p class="admonition-title">Serve this site, do not open it from disk</p>' +
      "<p>Links to folders and the search need a web server. From the folder that holds the " +
      "built site, run <code>python3 -m http.server -b 127.0.0.1 -d site-build</code> and open " +
      "<code>http://127.0.0.1:8000/</code>; or run <code>mkdocs serve -f site/mkdocs.yml</code> " +
      "in a checkout.</p>";
    var content = document.querySelector("article.md-content__inner") || document.body;
    content.insertBefore(note, content.firstChild);
  });
}
