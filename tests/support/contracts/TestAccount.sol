// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A minimal ERC-1271 smart account: a signature is valid when it is the owner's ECDSA signature of the hash.
contract TestAccount {
    bytes4 internal constant MAGIC = 0x1626ba7e;
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// Calls `target` as this account, for its owner only: how a smart wallet pays (the token is called from inside,
    /// so the transaction itself is sent to the account, not to the token).
    function execute(address target, uint256 value, bytes calldata data) external returns (bytes memory result) {
        require(msg.sender == owner, "owner");
        bool ok;
        (ok, result) = target.call{value: value}(data);
        require(ok, "call");
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC : bytes4(0xffffffff);
    }
}
