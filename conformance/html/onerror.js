window.onerror = function (message) {
  var root = document.documentElement;
  root.setAttribute("data-script-error", String(message));
  var box = document.getElementById("script-error");
  if (box) {
    document.getElementById("script-error-text").textContent = String(message);
    box.hidden = false;
  }
};
