// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Multicall3 (minimal)
/// @notice The two batch-read entry points of Multicall3 with the same ABI. The fixture places this runtime
/// code at Multicall3's canonical address (0xcA11bde05977b3631167028862bE2a173976CA11), where the x402 EVM
/// facilitator (tryAggregate) and viem's multicall action (aggregate3) expect it.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (Result[] memory returnData)
    {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory result) = calls[i].target.call(calls[i].callData);
            require(success || !requireSuccess, "Multicall3: call failed");
            returnData[i] = Result(success, result);
        }
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory result) = calls[i].target.call(calls[i].callData);
            require(success || calls[i].allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, result);
        }
    }
}
