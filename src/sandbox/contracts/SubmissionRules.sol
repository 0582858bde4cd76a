// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./Types.sol";

/// The live registry's submission checks, written for the sandbox from the rules observed on RateLoop's contracts
/// (docs/sandbox.md, notes/real-contract-rules.md): what a question's public references, text and details must be,
/// and the reward floors. Every failed check reverts with empty data, as the live registry's bare `require`s and its
/// media validator's stripped strings do. The round bounds are ProtocolConfig's (validateRoundConfig, which refuses
/// with its named `InvalidConfig()`).
library SubmissionRules {
    uint256 internal constant MAX_IMAGES = 4;
    uint256 internal constant MAX_URL_BYTES = 2048;
    uint256 internal constant MAX_TITLE_BYTES = 120;
    uint256 internal constant MAX_TAGS_BYTES = 256;
    // CategoryRegistry as RateLoop's deployment seeds it: eight categories, ids 1 to 8.
    uint256 internal constant CATEGORY_COUNT = 8;
    // ProtocolConfig's default minimums.
    uint256 internal constant DEFAULT_MAX_VOTERS = 100;
    uint256 internal constant MIN_POOL = 1_000_000;
    uint256 internal constant PARTICIPANT_UNIT = 10_000; // 0.01 of a 6-decimal token per possible voter
    uint256 internal constant BUNDLE_MAX_VOTERS = 100;

    function fail() internal pure {
        assembly ("memory-safe") {
            revert(0, 0)
        }
    }

    function check(bool ok) internal pure {
        if (!ok) fail();
    }

    /// Public references, text and category of one question (gated questions carry none of the public references).
    function checkQuestion(
        string memory contextUrl,
        string[] memory imageUrls,
        string memory videoUrl,
        string memory title,
        string memory tags,
        uint256 categoryId,
        Details memory details,
        bytes32 salt,
        Spec memory spec,
        bool gated
    ) internal pure {
        bool hasContext = bytes(contextUrl).length != 0;
        bool hasVideo = bytes(videoUrl).length != 0;
        if (gated) check(!hasContext && imageUrls.length == 0 && !hasVideo);
        else check(hasContext || imageUrls.length != 0 || hasVideo);
        if (hasContext) check(isUrl(contextUrl));
        checkMedia(imageUrls, videoUrl);
        check(bytes(title).length != 0 && bytes(title).length <= MAX_TITLE_BYTES);
        check(bytes(tags).length != 0 && bytes(tags).length <= MAX_TAGS_BYTES);
        check(spec.questionMetadataHash != bytes32(0) && spec.resultSpecHash != bytes32(0));
        checkDetails(details, gated);
        check(categoryId >= 1 && categoryId <= CATEGORY_COUNT);
        check(salt != bytes32(0));
    }

    /// A details URL needs its hash and a public question; a gated one needs a hash; no URL, no hash otherwise.
    function checkDetails(Details memory d, bool gated) internal pure {
        if (bytes(d.detailsUrl).length != 0) {
            check(d.detailsHash != bytes32(0) && !gated && isUrl(d.detailsUrl));
        } else if (gated) {
            check(d.detailsHash != bytes32(0));
        } else {
            check(d.detailsHash == bytes32(0));
        }
    }

    /// A video alone (a YouTube link), or up to four images, each content-addressed or hash-anchored, sorted.
    function checkMedia(string[] memory imageUrls, string memory videoUrl) internal pure {
        if (bytes(videoUrl).length != 0) {
            check(imageUrls.length == 0 && isUrl(videoUrl) && isYoutube(bytes(videoUrl)));
            return;
        }
        check(imageUrls.length <= MAX_IMAGES);
        for (uint256 i = 0; i < imageUrls.length; i++) {
            bytes memory u = bytes(imageUrls[i]);
            check(contentAddressed(u) || (isUrl(imageUrls[i]) && hashAnchored(u)));
            if (i > 0) check(after_(u, bytes(imageUrls[i - 1])));
        }
    }

    /// The reward floor: max(the minimum pool, the default voter cap × 0.01), at least 3 required voters (5 from
    /// 1,000 and 8 from 10,000 of the token), and an eligibility policy of open or credential bits.
    function checkReward(RewardTerms memory t) internal pure {
        uint256 floor = DEFAULT_MAX_VOTERS * PARTICIPANT_UNIT;
        if (floor < MIN_POOL) floor = MIN_POOL;
        uint256 participants = t.amount >= 10_000e6 ? 8 : t.amount >= 1_000e6 ? 5 : 3;
        check(t.asset <= 1 && t.amount >= floor && t.requiredVoters >= participants && t.amount >= t.requiredVoters);
        // Open (0), or any of the selfie, passport and verified-human bits, optionally with the recent-recheck flag.
        uint8 e = t.bountyEligibility;
        check(e & ~uint8(0x8e) == 0 && (e & 0x0e != 0 || e == 0));
    }

    // --- URLs -------------------------------------------------------------------------------------------------------

    /// https://, a host of at least one byte, then only unreserved, reserved and %-escaped bytes; no at-sign or backslash
    /// (userinfo, host confusion) and no escape in the host. The sandbox also takes its own loopback origin
    /// (http://127.0.0.1:port), where it serves uploaded images and hosted details over plain HTTP.
    function isUrl(string memory url) internal pure returns (bool) {
        bytes memory b = bytes(url);
        if (b.length > MAX_URL_BYTES) return false;
        uint256 start;
        if (startsWith(b, "https://")) start = 8;
        else if (startsWith(b, "http://127.0.0.1:")) start = 7;
        else return false;
        if (b.length <= start) return false;
        bool inHost = true;
        uint256 hostBytes;
        for (uint256 i = start; i < b.length; i++) {
            bytes1 c = b[i];
            if (!safe(c)) return false;
            if (c == "%") {
                if (inHost || i + 2 >= b.length || !hex_(b[i + 1]) || !hex_(b[i + 2])) return false;
                i += 2;
                continue;
            }
            if (inHost) {
                if (c == "/" || c == "?" || c == "#") {
                    if (hostBytes == 0) return false;
                    inHost = false;
                } else {
                    hostBytes++;
                }
            }
        }
        return hostBytes != 0;
    }

    function safe(bytes1 c) private pure returns (bool) {
        if ((c >= "0" && c <= "9") || (c >= "A" && c <= "Z") || (c >= "a" && c <= "z")) return true;
        bytes memory allowed = "-._~:/?#%!$&()*+,;=";
        for (uint256 i = 0; i < allowed.length; i++) if (c == allowed[i]) return true;
        return false;
    }

    function hex_(bytes1 c) private pure returns (bool) {
        return (c >= "0" && c <= "9") || (c >= "a" && c <= "f") || (c >= "A" && c <= "F");
    }

    function startsWith(bytes memory b, bytes memory p) internal pure returns (bool) {
        if (b.length < p.length) return false;
        for (uint256 i = 0; i < p.length; i++) if (b[i] != p[i]) return false;
        return true;
    }

    /// ends in #sha256=0x and 64 hex digits
    function hashAnchored(bytes memory b) private pure returns (bool) {
        bytes memory mark = "#sha256=0x";
        if (b.length < mark.length + 64) return false;
        uint256 at = b.length - 64 - mark.length;
        for (uint256 i = 0; i < mark.length; i++) if (b[at + i] != mark[i]) return false;
        for (uint256 i = at + mark.length; i < b.length; i++) if (!hex_(b[i])) return false;
        return true;
    }

    /// ipfs:// with a CIDv0 (Qm + 44 base58) or a lower-case base32 CIDv1 (b…, 32 to 128 bytes), or ar:// with a
    /// 43-byte base64url transaction id.
    function contentAddressed(bytes memory b) private pure returns (bool) {
        if (startsWith(b, "ipfs://")) {
            uint256 n = b.length - 7;
            if (n == 46 && b[7] == "Q" && b[8] == "m") {
                for (uint256 i = 7; i < b.length; i++) {
                    bytes1 c = b[i];
                    bool ok = (c >= "1" && c <= "9") || (c >= "A" && c <= "Z" && c != "I" && c != "O")
                        || (c >= "a" && c <= "z" && c != "l");
                    if (!ok) return false;
                }
                return true;
            }
            if (n < 32 || n > 128 || b[7] != "b") return false;
            for (uint256 i = 7; i < b.length; i++) {
                bytes1 c = b[i];
                if (!((c >= "a" && c <= "z") || (c >= "2" && c <= "7"))) return false;
            }
            return true;
        }
        if (startsWith(b, "ar://")) {
            if (b.length != 5 + 43) return false;
            for (uint256 i = 5; i < b.length; i++) {
                bytes1 c = b[i];
                if (!((c >= "0" && c <= "9") || (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c == "-" || c == "_")) return false;
            }
            return true;
        }
        return false;
    }

    /// Byte order: a sorts strictly after b.
    function after_(bytes memory a, bytes memory b) private pure returns (bool) {
        uint256 n = a.length < b.length ? a.length : b.length;
        for (uint256 i = 0; i < n; i++) {
            if (a[i] != b[i]) return a[i] > b[i];
        }
        return a.length > b.length;
    }

    /// youtu.be/<id> or www.youtube.com/embed/<id> (id up to ? or #), or a watch URL (youtube.com, www., m.) whose
    /// v= parameter is the id; the id is 11 bytes of [A-Za-z0-9_-].
    function isYoutube(bytes memory b) private pure returns (bool) {
        if (startsWith(b, "https://youtu.be/")) return pathId(b, 17);
        if (startsWith(b, "https://www.youtube.com/embed/")) return pathId(b, 30);
        if (startsWith(b, "https://youtube.com/watch?")) return watchId(b, 26);
        if (startsWith(b, "https://www.youtube.com/watch?")) return watchId(b, 30);
        if (startsWith(b, "https://m.youtube.com/watch?")) return watchId(b, 28);
        return false;
    }

    function idByte(bytes1 c) private pure returns (bool) {
        return (c >= "0" && c <= "9") || (c >= "A" && c <= "Z") || (c >= "a" && c <= "z") || c == "_" || c == "-";
    }

    function pathId(bytes memory b, uint256 from) private pure returns (bool) {
        uint256 n;
        for (uint256 i = from; i < b.length; i++) {
            if (b[i] == "?" || b[i] == "#") break;
            if (!idByte(b[i])) return false;
            n++;
        }
        return n == 11;
    }

    function watchId(bytes memory b, uint256 from) private pure returns (bool) {
        uint256 i = from;
        while (i < b.length) {
            if (b[i] == "#") return false;
            if ((i == from || b[i - 1] == "&") && i + 1 < b.length && b[i] == "v" && b[i + 1] == "=") {
                uint256 n;
                for (uint256 j = i + 2; j < b.length && b[j] != "&" && b[j] != "#"; j++) {
                    if (!idByte(b[j])) return false;
                    n++;
                }
                return n == 11;
            }
            while (i < b.length && b[i] != "&" && b[i] != "#") i++;
            if (i < b.length && b[i] == "&") i++;
        }
        return false;
    }
}
