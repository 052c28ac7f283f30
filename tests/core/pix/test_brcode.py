"""BR Code: CRC, encode/decode against the Central Bank's manual, a third-party decoder, and a
real QR image read back by a barcode scanner library."""

from __future__ import annotations

import binascii
import io
import string
from dataclasses import replace

import pytest
import segno
import zxingcpp
from brcode.static import fromJson as starkbank_static  # type: ignore[import-untyped]
from brcode.utils.brcodeId import (  # type: ignore[import-untyped]
    jsonFromBrcode as starkbank_decode,
)
from hypothesis import assume, given
from hypothesis import strategies as st
from PIL import Image

from pixgate.core.pix.brcode import (
    CITY_MAX,
    NAME_FALLBACK,
    NAME_MAX,
    BrCode,
    InvalidBrCode,
    crc16_ccitt_false,
    decode,
    dynamic,
    encode,
    static,
    transliterate,
)

# The static example of the Central Bank's BR Code manual.
MANUAL_EXAMPLE = (
    "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000"
    "5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"
)
EVP = "123e4567-e12b-12d1-a456-426655440000"
LOCATION = "pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25"


def with_crc(body: str) -> str:
    """A payload with a correct CRC, to test the checks that come after it."""
    payload = body + "6304"
    return f"{payload}{crc16_ccitt_false(payload.encode()):04X}"


def reference_crc(data: bytes) -> int:
    """Bit by bit, as the manual's pseudo-code does it."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = (crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


class TestCrc:
    def test_check_value(self) -> None:
        assert crc16_ccitt_false(b"123456789") == 0x29B1

    def test_empty(self) -> None:
        assert crc16_ccitt_false(b"") == 0xFFFF

    @given(st.binary(max_size=600))
    def test_matches_bitwise_and_stdlib(self, data: bytes) -> None:
        crc = crc16_ccitt_false(data)
        assert crc == reference_crc(data)
        assert crc == binascii.crc_hqx(data, 0xFFFF)  # CCITT polynomial, given the same init


class TestTransliterate:
    @pytest.mark.parametrize(
        ("text", "ascii"),
        [
            ("São Paulo", "Sao Paulo"),
            ("AÇÃO ÉÊÍÓÔÕÚÜ", "ACAO EEIOOOUU"),
            ("Jundiaí", "Jundiai"),
            ("ﬁnanças", "financas"),
            ("Ｆｕｌｌ", "Full"),
            ("日本 Shop", " Shop"),
            ("tab\there\n", "tabhere"),
            ("ß", ""),
            ("plain ~!@#", "plain ~!@#"),
        ],
    )
    def test_examples(self, text: str, ascii: str) -> None:
        assert transliterate(text) == ascii

    @given(st.text())
    def test_always_printable_ascii(self, text: str) -> None:
        result = transliterate(text)
        assert all(" " <= c <= "~" for c in result)
        assert transliterate(result) == result


class TestManualExample:
    def test_decodes(self) -> None:
        code = decode(MANUAL_EXAMPLE)
        assert code == BrCode(
            merchant_name="Fulano de Tal",
            merchant_city="BRASILIA",
            amount_cents=None,
            pix_key=EVP,
            location_url=None,
            txid="***",
            description=None,
            point_of_initiation=None,
        )

    def test_re_encodes_identically(self) -> None:
        assert encode(decode(MANUAL_EXAMPLE)) == MANUAL_EXAMPLE

    def test_builder_gives_the_same_payload(self) -> None:
        assert encode(static(EVP, "Fulano de Tal", "BRASILIA")) == MANUAL_EXAMPLE

    def test_lowercase_crc_is_accepted(self) -> None:
        assert decode(MANUAL_EXAMPLE[:-4] + "1d3d") == decode(MANUAL_EXAMPLE)

    def test_gui_in_any_case(self) -> None:
        body = MANUAL_EXAMPLE[:-8].replace("br.gov.bcb.pix", "BR.GOV.BCB.PIX")
        assert decode(with_crc(body)).pix_key == EVP


class TestEncode:
    def test_static_with_amount_description_and_txid(self) -> None:
        code = static(
            "fulano@example.com",
            "Padaria São João",
            "São José dos Campos",
            amount_cents=1050,
            txid="PEDIDO123",
            description="Pão de queijo",
        )
        payload = encode(code)
        assert payload.startswith("000201" + "26")
        assert "0014br.gov.bcb.pix0118fulano@example.com0213Pao de queijo" in payload
        assert "540510.50" in payload
        assert "5916Padaria Sao Joao" in payload
        assert "6015Sao Jose dos Ca" in payload  # transliterated, then cut to 15
        assert "62130509PEDIDO123" in payload
        assert decode(payload) == code

    def test_dynamic(self) -> None:
        code = dynamic("https://" + LOCATION, "Loja Exemplo", "Curitiba", 250000)
        assert code.location_url == LOCATION
        payload = encode(code)
        assert payload.startswith("000201010212")
        assert f"26810014br.gov.bcb.pix2559{LOCATION}5204" in payload
        assert "54072500.00" in payload
        assert "62070503***" in payload
        assert decode(payload) == code

    def test_dynamic_without_amount(self) -> None:
        payload = encode(dynamic(LOCATION, "Loja", "Recife", None))
        assert "5303986" + "5802BR" in payload

    def test_optional_fields(self) -> None:
        code = replace(
            static(EVP, "Fulano", "Natal"), point_of_initiation="11", postal_code="59000000"
        )
        payload = encode(code)
        assert payload.startswith("000201010211")
        assert "610859000000" in payload
        assert decode(payload) == code

    def test_names_are_cut_after_transliteration(self) -> None:
        code = static(EVP, "Ação Comércio de Alimentos Ltda", "  Ribeirão das Neves  ")
        assert code.merchant_name == "Acao Comercio de Alimento"
        assert len(code.merchant_name) == NAME_MAX
        assert code.merchant_city == "Ribeirao das Ne"
        assert len(code.merchant_city) == CITY_MAX

    def test_cut_leaves_no_trailing_space(self) -> None:
        assert static(EVP, "Fulano", "Sao Jose do Rio Preto").merchant_city == "Sao Jose do Rio"
        assert static(EVP, "A" * 24 + " B", "X").merchant_name == "A" * 24

    def test_description_is_cut_to_the_room_left(self) -> None:
        key = "k" * 60
        code = static(key, "Fulano", "Natal", description="x" * 50)
        assert code.description == "x" * (99 - 18 - 64 - 4)
        assert decode(encode(code)) == code
        assert static("k" * 77, "Fulano", "Natal", description="x").description is None
        assert static(EVP, "Fulano", "Natal", description="日本").description is None

    @pytest.mark.parametrize(
        "name", ["", "   ", "日本", "東京商店", "مطعم", "😀🎉", "\u0301\u0301"]
    )
    def test_a_name_with_nothing_printable_gets_the_fallback(self, name: str) -> None:
        code = static(EVP, name, "Natal")
        assert code.merchant_name == NAME_FALLBACK
        assert decode(encode(code)) == code

    @pytest.mark.parametrize(
        ("name", "fitted"),
        [
            ("Café 東京 Ltda", "Cafe Ltda"),
            ("  São\tJoão  ", "Sao Joao"),
            ("Ｆｕｌｌｗｉｄｔｈ", "Fullwidth"),
            ("Loja 😀 do Zé", "Loja do Ze"),
        ],
    )
    def test_names_keep_what_has_a_printable_form(self, name: str, fitted: str) -> None:
        assert static(EVP, name, "Natal").merchant_name == fitted

    @pytest.mark.parametrize("city", ["", "   ", "東京"])
    def test_a_city_with_nothing_printable_is_refused(self, city: str) -> None:
        with pytest.raises(InvalidBrCode, match="no printable"):
            static(EVP, "Fulano", city)

    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"location_url": LOCATION}, "either"),
            ({"pix_key": None}, "either"),
            ({"pix_key": None, "location_url": "https://" + LOCATION}, "scheme"),
            ({"merchant_name": "N" * 26}, "merchant name"),
            ({"merchant_name": "São"}, "merchant name"),
            ({"merchant_city": "C" * 16}, "merchant city"),
            ({"merchant_city": ""}, "merchant city"),
            ({"amount_cents": 0}, "amount"),
            ({"amount_cents": -1}, "amount"),
            ({"amount_cents": 10**12}, "amount"),
            ({"txid": "T" * 26}, "txid"),
            ({"txid": "pedido-1"}, "txid"),
            ({"txid": ""}, "txid"),
            ({"mcc": "00"}, "MCC"),
            ({"currency": "BRL"}, "currency"),
            ({"country": "br"}, "country"),
            ({"point_of_initiation": "13"}, "point of initiation"),
            ({"pix_key": "k" * 78}, "PIX key"),
            ({"pix_key": "k" * 70, "description": "d" * 10}, "field 26"),
            ({"description": ""}, "description"),
            ({"pix_key": None, "location_url": LOCATION, "description": "d"}, "static"),
            ({"postal_code": "ção"}, "postal code"),
        ],
    )
    def test_refuses_what_the_manual_does_not_allow(
        self, changes: dict[str, object], message: str
    ) -> None:
        code = replace(static(EVP, "Fulano", "Natal"), **changes)  # type: ignore[arg-type]
        with pytest.raises(InvalidBrCode, match=message):
            encode(code)


class TestDecode:
    @pytest.mark.parametrize(("amount", "cents"), [("10", 1000), ("10.5", 1050), ("0.01", 1)])
    def test_amount_spellings(self, amount: str, cents: int) -> None:
        body = MANUAL_EXAMPLE[:-8].replace("5802BR", f"54{len(amount):02d}{amount}5802BR")
        assert decode(with_crc(body)).amount_cents == cents

    def test_ignores_fields_it_does_not_use(self) -> None:
        other_scheme = "0011com.example0104abcd"
        body = MANUAL_EXAMPLE[:-8]
        body = body.replace("26580014", f"26{len(other_scheme):02d}{other_scheme}27580014", 1)
        body = body.replace("62070503***", "62150503***5004abcd") + "80080004test"
        code = decode(with_crc(body))
        assert code.pix_key == EVP
        assert code.txid == "***"

    def test_utf8_payload(self) -> None:
        body = MANUAL_EXAMPLE[:-8].replace("6008BRASILIA", "6009SÃO PAULO")
        assert decode(with_crc(body)).merchant_city == "SÃO PAULO"

    @pytest.mark.parametrize(
        ("payload", "message"),
        [
            ("", "starts with 000201"),
            ("000202" + MANUAL_EXAMPLE[6:], "starts with 000201"),
            (MANUAL_EXAMPLE[:-4] + "1D3E", "CRC mismatch"),
            (MANUAL_EXAMPLE.replace("Fulano", "Ful\ud800no"), "not valid text"),
            (MANUAL_EXAMPLE[:-4] + "1D3", "cut short"),
            (MANUAL_EXAMPLE[:-4] + "1D3G", "4 hex"),
            (MANUAL_EXAMPLE[:-4] + "+1D3", "4 hex"),
            (MANUAL_EXAMPLE + " ", "malformed"),
            (MANUAL_EXAMPLE + "\n", "malformed"),
            (MANUAL_EXAMPLE + "0000", "cut short"),
            (MANUAL_EXAMPLE + "0201X", "must come last"),
            (with_crc(MANUAL_EXAMPLE[:-8] + "6304ABCD"), "repeated"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("5802BR", "")), "field 58 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("5913Fulano de Tal", "")), "59 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("6008BRASILIA", "")), "60 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("5303986", "")), "53 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("52040000", "")), "52 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("62070503***", "")), "62 is required"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("62070503***", "62070703***")), "txid"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("bcb.pix", "bcb.pax")), "exactly one"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("5913Fulano", "5900Fulano")), "cut short"),
            (with_crc(MANUAL_EXAMPLE[:-8].replace("5913", "59AB")), "malformed"),
            (
                with_crc(
                    MANUAL_EXAMPLE[:-8].replace(
                        "26580014br.gov.bcb.pix0136",
                        "26820014br.gov.bcb.pix2520pix.example.com/qr/10136",
                    )
                ),
                "key or a URL",
            ),
            (
                with_crc(
                    MANUAL_EXAMPLE[:-8].replace(
                        "26580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000",
                        "26180014br.gov.bcb.pix",
                    )
                ),
                "key or a URL",
            ),
            (with_crc("000201" + "010213" + MANUAL_EXAMPLE[6:-8]), "point of initiation"),
        ],
    )
    def test_refuses(self, payload: str, message: str) -> None:
        with pytest.raises(InvalidBrCode, match=message):
            decode(payload)

    @pytest.mark.parametrize("amount", ["10.555", "10.", ".50", "1,00", "-1.00", "0.00", "0"])
    def test_refuses_bad_amounts(self, amount: str) -> None:
        body = MANUAL_EXAMPLE[:-8].replace("5802BR", f"54{len(amount):02d}{amount}5802BR")
        with pytest.raises(InvalidBrCode, match="amount"):
            decode(with_crc(body))

    def test_two_pix_templates_are_refused(self) -> None:
        body = MANUAL_EXAMPLE[:-8].replace("52040000", "27180014br.gov.bcb.pix52040000")
        with pytest.raises(InvalidBrCode, match="exactly one"):
            decode(with_crc(body))


printable = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
alnum = st.sampled_from(string.ascii_letters + string.digits)


def text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(printable, min_size=1, max_size=max_size)


@st.composite
def br_codes(draw: st.DrawFn) -> BrCode:
    """Any BR Code `encode` accepts: ASCII already transliterated and within the limits."""
    is_static = draw(st.booleans())
    common = {
        "merchant_name": draw(text(NAME_MAX)),
        "merchant_city": draw(text(CITY_MAX)),
        "amount_cents": draw(st.none() | st.integers(1, 999_999_999_999)),
        "txid": draw(st.just("***") | st.text(alnum, min_size=1, max_size=25)),
        "point_of_initiation": draw(st.sampled_from([None, "11", "12"])),
        "mcc": draw(st.text(st.sampled_from(string.digits), min_size=4, max_size=4)),
        "currency": draw(st.sampled_from(["986", "840"])),
        "country": draw(st.sampled_from(["BR", "PT"])),
        "postal_code": draw(st.none() | text(99)),
    }
    if is_static:
        key = draw(st.uuids().map(str) | st.emails().filter(lambda e: e.isascii()) | text(77))
        assume(len(key) <= 77)
        room = 99 - 18 - 4 - len(key) - 4
        description = draw(st.none() | text(room)) if room >= 1 else None
        return BrCode(pix_key=key, description=description, **common)  # type: ignore[arg-type]
    url = draw(text(77).filter(lambda u: "://" not in u))
    return BrCode(location_url=url, **common)  # type: ignore[arg-type]


class TestRoundTrip:
    @given(br_codes())
    def test_decode_inverts_encode(self, code: BrCode) -> None:
        assert decode(encode(code)) == code

    @given(br_codes())
    def test_payload_is_ascii_with_uppercase_crc(self, code: BrCode) -> None:
        payload = encode(code)
        assert payload.isascii()
        assert payload[-8:-4] == "6304"
        assert payload[-4:] == payload[-4:].upper()

    @given(br_codes(), st.integers(min_value=0), st.sampled_from(string.ascii_letters))
    def test_any_changed_character_is_caught(self, code: BrCode, at: int, new: str) -> None:
        payload = encode(code)
        position = at % (len(payload) - 4)
        assume(payload[position] != new)
        changed = payload[:position] + new + payload[position + 1 :]
        with pytest.raises(InvalidBrCode):
            decode(changed)


class TestThirdPartyDecoder:
    """starkbank-brcode, an independent implementation, reads our codes and we read its."""

    def test_reads_our_static_code(self) -> None:
        code = static(
            "fulano@example.com", "Fulano de Tal", "Brasília", 123456, "PEDIDO42", "Pedido 42"
        )
        fields = starkbank_decode(encode(code))
        assert fields["26"]["00"] == "br.gov.bcb.pix"
        assert fields["26"]["01"] == "fulano@example.com"
        assert fields["26"]["02"] == "Pedido 42"
        assert fields["54"] == "1234.56"
        assert fields["59"] == "Fulano de Tal"
        assert fields["60"] == "Brasilia"
        assert fields["62"]["05"] == "PEDIDO42"

    def test_reads_our_dynamic_code(self) -> None:
        fields = starkbank_decode(encode(dynamic(LOCATION, "Loja", "Recife", 1000)))
        assert fields["01"] == "12"
        assert fields["26"]["25"] == LOCATION
        assert fields["54"] == "10.00"
        assert fields["62"]["05"] == "***"

    def test_reads_the_manual_example(self) -> None:
        assert starkbank_decode(MANUAL_EXAMPLE)["26"]["01"] == EVP

    def test_we_read_its_codes(self) -> None:
        payload = starkbank_static(
            {
                "key": EVP,
                "name": "Fulano de Tal",
                "city": "Sao Paulo",
                "amount": 1050,
                "txid": "ABC123",
            }
        )
        code = decode(payload)
        assert (code.pix_key, code.amount_cents, code.txid) == (EVP, 1050, "ABC123")
        assert (code.merchant_name, code.merchant_city) == ("Fulano de Tal", "Sao Paulo")

    @given(br_codes())
    def test_agrees_on_every_code(self, code: BrCode) -> None:
        fields = starkbank_decode(encode(code))
        account = fields["26"]
        assert account.get("01") == code.pix_key
        assert account.get("25") == code.location_url
        assert fields["59"] == code.merchant_name
        assert fields["60"] == code.merchant_city
        assert fields["62"]["05"] == code.txid
        if code.amount_cents is None:
            assert "54" not in fields
        else:
            assert fields["54"] == f"{code.amount_cents / 100:.2f}"


class TestQrImage:
    """The code survives being drawn as a QR and scanned back by ZXing."""

    @pytest.mark.parametrize(
        "payload",
        [
            MANUAL_EXAMPLE,
            encode(static("fulano@example.com", "Padaria São João", "Natal", 1050, "PED1")),
            encode(dynamic(LOCATION, "Loja Exemplo Comercio Ltd", "Sao Paulo", 999999)),
        ],
    )
    def test_scan_gives_back_the_same_string(self, payload: str) -> None:
        buffer = io.BytesIO()
        segno.make_qr(payload, error="m").save(buffer, kind="png", scale=4, border=4)
        buffer.seek(0)
        with Image.open(buffer) as image:
            results = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
        assert [r.text for r in results] == [payload]
        assert results[0].format == zxingcpp.BarcodeFormat.QRCode
        assert decode(results[0].text) == decode(payload)
