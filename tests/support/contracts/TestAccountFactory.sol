// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./TestAccount.sol";

/// CREATE2 factory: an account's address is known (counterfactual) before `deploy` is ever called (ERC-6492).
contract TestAccountFactory {
    function deploy(address owner, bytes32 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length == 0) new TestAccount{salt: salt}(owner);
    }

    function getAddress(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(TestAccount).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
