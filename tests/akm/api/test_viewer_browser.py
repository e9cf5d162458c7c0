"""The audit viewer in a real headless browser: Debian's chromium driven through its
chromedriver by Selenium, against a real uvicorn process running the production answer
pipeline over ingested fixture articles (hashing embedder, a generator that copies the chosen
passage word by word, slowly enough to watch the draft arrive).

The test asks a question with the keyboard, watches the unverified draft turn into verified
claims and a verdict, opens the packet page and checks the highlighted lines, revision and
checksum against the fixture file, follows the source's dependents page, and filters the
rejection log. Every control and link it meets must have an accessible name (as the browser
computes it). Screenshots go to ``tmp_path/screenshots`` and, when ``AKM_SCREENSHOT_DIR`` is
set, are copied there.

Needs ``chromium`` and ``chromium-driver`` from Debian (``.ci/run`` installs them); without them
the test is skipped and says so.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from uvicorn_process import HERE, fake_server_command, fixture_project, running_server, spare_port

pytestmark = [pytest.mark.server, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip(
        "the browser test needs Debian's chromium and chromium-driver on PATH "
        "(apt-get install -y chromium chromium-driver; .ci/run installs them): "
        f"chromium={CHROMIUM}, chromedriver={CHROMEDRIVER}",
        allow_module_level=True,
    )
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is not installed (it is in the dev extra: pip install -e '.[dev]')"
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

FIXTURE_DOCS = HERE.parents[1] / "fixtures" / "answers" / "docs"
BRIDGE = FIXTURE_DOCS / "harbour_bridge.md"
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"
# A source whose text and title are markup: the viewer must show it as text, and run none of it.
HOSTILE_DOC = (
    "# Tide tables <img src=x onerror=\"document.title='owned'\">\n\n"
    "<script>document.title = 'owned';</script> High water at Marlow Bay comes twice a day.\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = fixture_project(tmp_path_factory.mktemp("viewer"), {"hostile.md": HOSTILE_DOC})
    # About three seconds of draft: long enough to see it before the claims replace it.
    env["AKM_TEST_WORD_DELAY_S"] = "0.15"
    port = spare_port()
    with running_server(fake_server_command(port, "openai_server_app:create"), port, env) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # the tests may run as root, where chromium's sandbox cannot start
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1400",
        "--lang=en",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    )
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def screenshots(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "screenshots"
    folder.mkdir()
    yield folder
    copy_to = os.environ.get("AKM_SCREENSHOT_DIR")
    if copy_to:
        shutil.copytree(folder, copy_to, dirs_exist_ok=True)


def wait_for(driver: WebDriver, condition: object, timeout: float = 60, message: str = "") -> object:
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, message)  # type: ignore[arg-type]


def by_label(driver: WebDriver, text: str) -> WebElement:
    """The control a visible <label> names (the way a person finds it)."""
    label = driver.find_element(By.XPATH, f"//label[normalize-space()='{text}']")
    return driver.find_element(By.ID, str(label.get_attribute("for")))


def assert_named_controls(driver: WebDriver) -> None:
    """Every form control, button and link on the page has an accessible name."""
    elements = driver.find_elements(By.CSS_SELECTOR, "input, textarea, select, button, a[href]")
    assert elements
    for element in elements:
        if not element.is_displayed():
            continue
        name = element.accessible_name.strip()
        assert name, element.get_attribute("outerHTML")
        assert name.lower() not in ("click here", "here", "link"), name


def shoot(driver: WebDriver, folder: Path, name: str) -> Path:
    path = folder / name
    assert driver.save_screenshot(str(path)), path
    assert path.stat().st_size > 10_000  # a rendered page, not an empty frame
    return path


def test_ask_watch_claims_open_packet_and_filter_rejections(
    server: str, browser: WebDriver, screenshots: Path
) -> None:
    driver = browser
    driver.get(f"{server}/ui/")
    assert driver.title == "Ask · AKM evidence viewer"
    assert_named_controls(driver)
    question = by_label(driver, "Question")
    live = driver.find_element(By.ID, "answer")
    assert live.get_attribute("aria-live") == "polite"

    # Ask with the keyboard only: type, Tab to the button, Enter.
    question.click()
    question.send_keys(QUESTION)
    question.send_keys(Keys.TAB)
    ask = driver.switch_to.active_element
    assert ask.accessible_name == "Ask"
    ask.send_keys(Keys.ENTER)

    # The draft streams in, marked unverified, before any claim is shown (read in one script
    # call, so the state seen is one moment's).
    seen = wait_for(
        driver,
        lambda d: d.execute_script(
            "const text = document.getElementById('draft-text').textContent;"
            "return text.split(/\\s+/).filter(Boolean).length >= 3 ? {"
            " text: text,"
            " draftShown: !document.getElementById('draft').hidden,"
            " claimsShown: !document.getElementById('claims-section').hidden,"
            " heading: document.getElementById('draft-heading').textContent} : null;"
        ),
        30,
        "no draft text arrived",
    )
    assert isinstance(seen, dict)
    assert seen["draftShown"] and not seen["claimsShown"], seen
    assert "unverified" in seen["heading"]
    partial = str(seen["text"])
    shoot(driver, screenshots, "1-ask-draft-streaming.png")

    # Then the claims with their status replace the draft, then the verdict and the packet link.
    verdict = driver.find_element(By.ID, "verdict")
    wait_for(driver, lambda d: verdict.text != "", 60, "no verdict arrived")
    assert verdict.text == "PASS"
    assert live.get_attribute("aria-busy") == "false"
    assert not driver.find_element(By.ID, "draft").is_displayed()
    claims = driver.find_elements(By.CSS_SELECTOR, "#claims li")
    assert claims
    statuses = [claim.get_attribute("data-status") for claim in claims]
    assert "supported" in statuses
    supported = claims[statuses.index("supported")]
    assert "19 March 1932" in supported.text
    assert "support score 1.00" in supported.text
    assert "docs/harbour_bridge.md" in supported.text
    assert partial and partial.split()[0] in " ".join(claim.text for claim in claims)
    assert driver.find_element(By.ID, "answer-status").text == "Verdict: PASS."
    link = driver.find_element(By.ID, "packet-link")
    assert link.accessible_name.startswith("Open the evidence packet pk:sha256:")
    assert_named_controls(driver)
    shoot(driver, screenshots, "2-ask-claims-and-verdict.png")

    # The packet page: the claim, its status and score, the cited lines highlighted at the
    # locator, and the revision and checksum of the file that was read.
    link.send_keys(Keys.ENTER)
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Evidence packet", 30)
    assert driver.find_element(By.ID, "packet-question").text == QUESTION
    assert driver.find_element(By.ID, "packet-verdict").text == "PASS"
    article = driver.find_element(By.CSS_SELECTOR, "article.claim")
    assert article.find_element(By.CSS_SELECTOR, ".claim-status").text == "supported"
    assert article.find_element(By.CSS_SELECTOR, ".claim-score").text == "1.00"
    checksum = hashlib.sha256(BRIDGE.read_bytes()).hexdigest()
    assert article.find_element(By.CSS_SELECTOR, ".row-checksum").text == checksum
    assert article.find_element(By.CSS_SELECTOR, ".row-revision").text == f"sha256:{checksum[:16]}"
    assert article.find_element(By.CSS_SELECTOR, ".row-lines-read").text == "docs/harbour_bridge.md:1-5"
    highlighted = article.find_elements(By.CSS_SELECTOR, ".source-line.highlighted")
    file_lines = BRIDGE.read_text().splitlines()
    assert [line.get_attribute("data-line") for line in highlighted] == ["1", "2", "3", "4", "5"]
    for element, expected in zip(highlighted, file_lines[:5], strict=True):
        assert element.find_element(By.TAG_NAME, "mark").text == expected.strip()
    assert "19 March 1932" in highlighted[2].text
    # The highlight is visible: a background unlike the context lines around it.
    context = article.find_elements(By.CSS_SELECTOR, ".source-line.context")
    assert context
    assert highlighted[0].value_of_css_property("background-color") != context[0].value_of_css_property(
        "background-color"
    )
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", article)
    assert_named_controls(driver)
    shoot(driver, screenshots, "3-packet-highlighted-lines.png")

    # What depends on the cited source: this packet, at the current revision.
    packet_url = driver.current_url
    packet_id = driver.find_element(By.ID, "packet-id").text
    driver.find_element(By.LINK_TEXT, "What depends on docs/harbour_bridge.md").click()
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text.startswith("What depends on"), 30)
    assert driver.find_element(By.ID, "source-id").text == "akm:docs:harbour_bridge.md"
    revision = driver.find_element(By.CSS_SELECTOR, "section.revision h3")
    assert revision.text == f"Revision sha256:{checksum[:16]} (current)"
    packets = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "table.dependents a")]
    assert packet_url in packets
    assert_named_controls(driver)
    shoot(driver, screenshots, "4-source-dependents.png")

    # The rejection log, filtered with the form: the candidates selection dropped for this packet.
    driver.find_element(By.LINK_TEXT, "Rejection log").click()
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Rejection log", 30)
    assert_named_controls(driver)
    everything = len(driver.find_elements(By.CSS_SELECTOR, "tr.rejection"))
    by_label(driver, "Stage").send_keys("selection")
    by_label(driver, "Packet ID").send_keys(packet_id)
    by_label(driver, "Packet ID").send_keys(Keys.ENTER)
    wait_for(driver, lambda d: "stage=selection" in d.current_url, 30)
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.rejection")
    assert 0 < len(rows) < everything
    assert {row.find_element(By.CSS_SELECTOR, ".rejection-stage").text for row in rows} == {"selection"}
    assert {row.find_element(By.CSS_SELECTOR, ".rejection-reason").text for row in rows} == {"not-relevant"}
    assert by_label(driver, "Stage").get_attribute("value") == "selection"
    shoot(driver, screenshots, "5-rejections-filtered.png")

    # Markup in a source is shown as text and never runs.
    driver.get(f"{server}/ui/sources/akm:docs:hostile.md")
    assert driver.find_element(By.TAG_NAME, "h1").text == "What depends on docs/hostile.md"
    assert "<img src=x" in driver.find_element(By.TAG_NAME, "main").text
    assert not driver.find_elements(By.CSS_SELECTOR, "main img, main script")
    assert driver.title == "What depends on this source · AKM evidence viewer"

    # An out-of-scope or unknown packet is a 404 page in the browser too.
    driver.get(f"{server}/ui/packets/pk:sha256:{'0' * 64}")
    assert driver.find_element(By.TAG_NAME, "h1").text == "No such packet"
    assert sorted(path.name for path in screenshots.iterdir()) == [
        "1-ask-draft-streaming.png",
        "2-ask-claims-and-verdict.png",
        "3-packet-highlighted-lines.png",
        "4-source-dependents.png",
        "5-rejections-filtered.png",
    ]
