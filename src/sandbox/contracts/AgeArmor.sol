// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// On-chain validity rules for an armored age/tlock vote ciphertext (chain.md §9.8): size, charset, armor
/// header/footer, line lengths, a single tlock stanza naming exactly the target round and drand chain hash,
/// a stanza body of at least 80 bytes, a 32-byte MAC and at least 65 payload bytes.
library AgeArmor {
    error CiphertextTooLarge();
    error InvalidCiphertext();

    bytes internal constant HEADER = "-----BEGIN AGE ENCRYPTED FILE-----";
    bytes internal constant FOOTER = "-----END AGE ENCRYPTED FILE-----";
    bytes internal constant AGE_PREFIX = "age-encryption.org/v1\n-> tlock ";

    function validate(bytes calldata c, uint64 targetRound, bytes32 chainHash) internal pure {
        if (c.length == 0 || c.length > 2048) revert CiphertextTooLarge();
        for (uint256 i = 0; i < c.length; i++) {
            uint8 b = uint8(c[i]);
            if (!((b >= 0x20 && b <= 0x7e) || b == 0x0a || b == 0x0d)) revert InvalidCiphertext();
        }
        uint256 end = c.length;
        while (end > 0 && (c[end - 1] == 0x0a || c[end - 1] == 0x0d)) end--;
        if (end < HEADER.length + FOOTER.length + 2) revert InvalidCiphertext();
        for (uint256 i = 0; i < HEADER.length; i++) if (c[i] != HEADER[i]) revert InvalidCiphertext();
        uint256 footerStart = end - FOOTER.length;
        for (uint256 i = 0; i < FOOTER.length; i++) if (c[footerStart + i] != FOOTER[i]) revert InvalidCiphertext();
        if (c[footerStart - 1] != 0x0a) revert InvalidCiphertext();
        uint256 bodyStart = HEADER.length;
        if (c[bodyStart] == 0x0d) bodyStart++;
        if (c[bodyStart] != 0x0a) revert InvalidCiphertext();
        bytes memory decoded = _decodeArmor(c, bodyStart + 1, footerStart);
        _checkAge(decoded, targetRound, chainHash);
    }

    function _b64(uint8 ch) private pure returns (uint256 v, bool ok) {
        if (ch >= 65 && ch <= 90) return (ch - 65, true);
        if (ch >= 97 && ch <= 122) return (ch - 71, true);
        if (ch >= 48 && ch <= 57) return (ch + 4, true);
        if (ch == 43) return (62, true);
        if (ch == 47) return (63, true);
        return (0, false);
    }

    function _decodeArmor(bytes calldata c, uint256 from, uint256 to) private pure returns (bytes memory out) {
        out = new bytes(((to - from) * 3) / 4 + 3);
        uint256 len;
        uint256 acc;
        uint256 bits;
        uint256 lineLen;
        bool padding;
        for (uint256 i = from; i < to; i++) {
            uint8 ch = uint8(c[i]);
            if (ch == 0x0a) {
                lineLen = 0;
                continue;
            }
            if (ch == 0x0d) continue;
            if (++lineLen > 64) revert InvalidCiphertext();
            if (ch == 61) {
                padding = true;
                continue;
            }
            (uint256 v, bool ok) = _b64(ch);
            if (!ok || padding) revert InvalidCiphertext();
            acc = (acc << 6) | v;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out[len++] = bytes1(uint8(acc >> bits));
                acc &= (1 << bits) - 1;
            }
        }
        assembly {
            mstore(out, len)
        }
    }

    function _hexNibble(uint8 ch) private pure returns (uint256) {
        if (ch >= 48 && ch <= 57) return ch - 48;
        if (ch >= 97 && ch <= 102) return ch - 87;
        revert InvalidCiphertext();
    }

    function _checkAge(bytes memory d, uint64 targetRound, bytes32 chainHash) private pure {
        if (d.length < AGE_PREFIX.length + 70) revert InvalidCiphertext();
        for (uint256 i = 0; i < AGE_PREFIX.length; i++) if (d[i] != AGE_PREFIX[i]) revert InvalidCiphertext();
        uint256 p = AGE_PREFIX.length;
        uint256 round;
        uint256 digits;
        while (p < d.length && d[p] != 0x20) {
            uint8 ch = uint8(d[p]);
            if (ch < 48 || ch > 57 || digits == 20) revert InvalidCiphertext();
            round = round * 10 + (ch - 48);
            digits++;
            p++;
        }
        if (digits == 0 || round != targetRound) revert InvalidCiphertext();
        p++;
        if (p + 65 > d.length) revert InvalidCiphertext();
        uint256 hash;
        for (uint256 i = 0; i < 64; i++) hash = (hash << 4) | _hexNibble(uint8(d[p + i]));
        if (bytes32(hash) != chainHash) revert InvalidCiphertext();
        p += 64;
        if (d[p] != 0x0a) revert InvalidCiphertext();
        p++;
        // Stanza body lines until "--- "; a second recipient ("-> ") is refused.
        uint256 bodyChars;
        while (true) {
            if (p + 4 > d.length) revert InvalidCiphertext();
            if (d[p] == 0x2d && d[p + 1] == 0x2d && d[p + 2] == 0x2d && d[p + 3] == 0x20) break;
            if (d[p] == 0x2d && d[p + 1] == 0x3e) revert InvalidCiphertext();
            while (p < d.length && d[p] != 0x0a) {
                (, bool ok) = _b64(uint8(d[p]));
                if (!ok) revert InvalidCiphertext();
                bodyChars++;
                p++;
            }
            p++;
        }
        if ((bodyChars * 6) / 8 < 80) revert InvalidCiphertext();
        p += 4;
        uint256 macChars;
        while (p < d.length && d[p] != 0x0a) {
            (, bool ok) = _b64(uint8(d[p]));
            if (!ok) revert InvalidCiphertext();
            macChars++;
            p++;
        }
        if (macChars != 43 || p >= d.length) revert InvalidCiphertext();
        if (d.length - (p + 1) < 65) revert InvalidCiphertext();
    }
}
